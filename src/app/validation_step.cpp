#include "app/validation_step.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "gpu/nvml_probe.h"
#include "health/busy_gpu.h"
#include "validate/expected_gpus.h"
#include "kernels/validation_kernels.h"

namespace provision {
namespace {

// Where the GPUs' device nodes are: /dev; in test builds the folder
// PROVISION_TEST_DEV names, and none for a simulated worker without it (the
// fake driver's machine, not this one's).
std::string device_folder(const ValidationSettings& settings) {
    if (settings.device_folder) return *settings.device_folder;
    if (settings.workers.simulate) return {};
    return "/dev";
}

// Checks worth running: those of every mechanism that could serve before
// validation (so a fallback needs no second round), with `every_mechanism`
// those of every mechanism of the recipes, and of the features that are
// settings (TF32).  The number formats' checks join them on a GPU that runs
// checks anyway: no GPU is opened for its formats alone (they are "skipped"
// there), so a start that needs no check stays as cheap as it was.
std::vector<GpuChecks> plan_checks(const Inventory& inventory, const RecipeSet& recipes, const Decision& decision,
                                   bool every_mechanism, ValidationSummary& summary) {
    std::set<std::string> wanted, formats;
    for (const auto& candidate : decision.candidates)
        if (candidate.accepted)
            for (const auto& check : recipes.mechanisms.at(candidate.mechanism).checks) wanted.insert(check);
    if (every_mechanism)
        for (const auto& [name, mechanism] : recipes.mechanisms)
            wanted.insert(mechanism.checks.begin(), mechanism.checks.end());
    for (const auto& [name, feature] : recipes.features)
        for (const auto& check : feature.checks) (feature.number_format ? formats : wanted).insert(check);

    std::vector<GpuChecks> work;
    for (const auto& gpu : inventory.gpus) {
        GpuChecks entry{gpu.index, {}};
        std::set<std::string> seen;
        auto plan = [&](const std::string& check) {
            if (!seen.insert(check).second) return;
            const CheckSpec& spec = recipes.checks.at(check);
            if (spec.compute_capability.contains(gpu.compute_capability)) {
                entry.checks.push_back(check);
            } else {
                summary.checks.push_back({gpu.index, check, CheckStatus::unsupported, 0, 0, 0, 0,
                                          fmt::format("needs {}", spec.compute_capability.str())});
            }
        };
        for (const auto& check : wanted) plan(check);
        if (!entry.checks.empty())
            for (const auto& check : formats) plan(check);
        if (!entry.checks.empty()) work.push_back(entry);
    }
    return work;
}

}  // namespace

const ProofMemory::Proof* ProofMemory::find(const std::string& uuid) const {
    const auto it = proofs_.find(uuid);
    return it == proofs_.end() ? nullptr : &it->second;
}

void ProofMemory::remember(const std::string& uuid, Proof proof) { proofs_[uuid] = std::move(proof); }

ValidationStep::ValidationStep(const ValidationSettings& settings, ProofMemory* proofs)
    : validation_(settings.workers), validate_off_by_(settings.off_by), nvml_library_(settings.nvml_library),
      proofs_(proofs), workers_(validation_) {
    can_validate_ = validation_.mode != ValidateMode::off && !settings.simulated_machine &&
                    (kernels::kernels_available() || validation_.simulate);
    every_mechanism_ = settings.every_mechanism;
    if (!can_validate_ || proofs_) return;  // --repeat: no GPU is opened before NVML says it is idle
    const std::optional<std::string>& visible = settings.cuda_visible_devices;
    // Every GPU's worker from the start: each opens its GPU (the driver's
    // cuInit and context, most of a start's cost) while the rest is read.
    std::vector<WorkerTarget> expected;
    for (const std::string& entry : expected_gpu_entries(visible, count_gpu_device_nodes(device_folder(settings))))
        expected.push_back({static_cast<int>(expected.size()), entry, {}});
    workers_.keep(expected);
}

std::optional<std::string> ValidationStep::skip_reason(const Inventory& inventory) const {
    if (validation_.mode == ValidateMode::off) return fmt::format("disabled ({})", validate_off_by_);
    if (inventory.gpus.empty()) return "no GPU";
    if (inventory.simulated()) return "simulated";
    if (!can_validate_) return "provision was built without the CUDA kernels";
    return std::nullopt;
}

void ValidationStep::follow(const Inventory& inventory) {
    if (skip_reason(inventory)) {
        workers_.stop_all();
        return;
    }
    std::vector<WorkerTarget> targets;
    for (const Gpu& gpu : inventory.gpus) {
        if (left_alone(gpu)) continue;
        // By UUID, whatever the order CUDA would give.  A GPU in MIG mode is
        // reached only through its instances' names: the workload's view then.
        const bool by_uuid = !gpu.uuid.empty() && !gpu.health.mig_mode.value_or(false);
        targets.push_back({gpu.index, by_uuid ? gpu.uuid : std::string(), gpu.uuid});
    }
    workers_.keep(targets);
}

namespace {

// A node of a job across nodes that has no rank to offer still comes to the
// rendezvous, and says why.
void take_no_part(NodeMeeting& nodes, const std::string& why) {
    const MakeNcclId no_id = [&](std::string& no) -> std::optional<std::string> {
        no = fmt::format("node 0 has no rank to offer: {}", why);
        return std::nullopt;
    };
    std::string unmet;
    const auto met = nodes.meet(0, no_id, unmet);
    if (!met) return;
    nodes.proof_limit(met->ranks, LinkWork{}.nccl_bytes / 4, LinkWork{}.nccl_repeats);  // the others' all-reduce
    NcclAllReduceResult none;
    none.status = PeerCopyStatus::not_measured;
    none.detail = fmt::format("this node took no part: {}", why);
    nodes.settle(none);
}

}  // namespace

CopyChecks ValidationStep::run(const Inventory& inventory, const RecipeSet& recipes, const Decision& first,
                               const NcclFacts& nccl, NodeMeeting* nodes, ValidationSummary& summary,
                               PhaseClock& clock) {
    // Detection's NVML session, kept for the counters' second read, goes
    // when this returns, whatever the way (its shutdown on a thread).
    struct ReleaseNvml {
        ~ReleaseNvml() { release_nvml(); }
    } release_at_return;
    CopyChecks copies;
    if (const auto reason = skip_reason(inventory)) {
        if (nodes) take_no_part(*nodes, *reason);
        summary.reason = *reason;
        workers_.stop_all();
        copies.run = inventory.simulated() ? CopyCheckRun::simulated : CopyCheckRun::not_run;
        copies.reason = *reason;
        return copies;
    }
    auto work = plan_checks(inventory, recipes, first, every_mechanism_, summary);
    std::erase_if(work, [&](const GpuChecks& job) { return left_alone(inventory.gpus[static_cast<std::size_t>(job.gpu)]).has_value(); });
    LinkWork links;
    links.host_links = true;
    links.peer_path = nccl.paths.peer;
    links.host_memory = nccl.paths.cumem_host && inventory.gpus.size() > 1;  // NCCL's host buffers join ranks
    links.fabric_handles = nccl.fabric_handle_check;
    if (validation_.mode == ValidateMode::full && nccl.library && (inventory.gpus.size() > 1 || nodes)) {
        links.nccl_library = nccl.library->path;
        links.nodes = nodes;
        // Across nodes a quarter of it: 1 GiB over a 10 Gb/s socket would
        // take most of the rank's time limit on its own.
        if (nodes) links.nccl_bytes = std::size_t{256} << 20;
    } else if (nodes) {
        // The other nodes neither wait for this one nor count its ranks.
        take_no_part(*nodes, nccl.library ? "validation is not full" : "the workload has no NCCL this node can load");
    }
    for (const GpuPair& pair : inventory.pairs)
        if (pair.p2p == PeerAccess::ok && !left_alone(inventory.gpus[static_cast<std::size_t>(pair.first)]) &&
            !left_alone(inventory.gpus[static_cast<std::size_t>(pair.second)]))
            links.peer_pairs.push_back({pair.first, pair.second});
    const auto start = std::chrono::steady_clock::now();
    ValidationRun run = workers_.run(work, links);
    const auto end = std::chrono::steady_clock::now();
    summary.checks.insert(summary.checks.end(), run.checks.begin(), run.checks.end());
    settle_proofs(inventory, run.full_gpus, recipes.policy.memory_in_use_min_mib, summary);
    summary.wall_ms = std::chrono::duration<double, std::milli>(end - start).count();
    if (const auto ready = workers_.ready_at()) clock.mark_at(Phase::worker_ready, *ready);
    for (const auto& times : workers_.times()) clock.mark_gpu(times.gpu, times.started, times.running, times.ready, times.done);
    if (!work.empty()) clock.mark_at(Phase::checks, end);
    if (work.empty()) {
        if (links.nodes) take_no_part(*links.nodes, "no GPU of this node runs checks");
        copies.run = CopyCheckRun::not_run;
        copies.reason = "no GPU runs checks, so no copy was made";
    } else {
        copies.run = CopyCheckRun::ran;
        copies.pairs = std::move(run.peer_copies);
        copies.hosts = std::move(run.host_copies);
        copies.host_memory = std::move(run.host_memory);
        copies.fabric_handles = std::move(run.fabric_handles);
        copies.nccl_all_reduce = std::move(run.nccl_all_reduce);
        // The link error counters again, against those read at start: what
        // rose during the copies (pod/gpu_links_judgement.h).
        copies.link_errors_after = read_link_errors_again(nvml_library_, inventory.gpus);
        copies.copies_seconds = summary.wall_ms / 1000;
    }

    bool any_run = false, any_failed = false;
    for (const auto& check : summary.checks) {
        if (check.status == CheckStatus::unsupported || check.status == CheckStatus::not_measured) continue;
        any_run = true;
        if (check.status != CheckStatus::passed) any_failed = true;
    }
    summary.status = !any_run     ? ValidationStatus::skipped
                     : any_failed ? ValidationStatus::failed
                                  : ValidationStatus::passed;
    if (!any_run) summary.reason = "no check applies to these GPUs";
    if (!any_run && !summary.busy.empty()) summary.reason = "every GPU that runs checks is busy";
    if (any_failed) summary.reason = "a check failed; mechanisms that need it were rejected";
    return copies;
}

std::optional<std::string> ValidationStep::left_alone(const Gpu& gpu) const {
    if (!proofs_) return std::nullopt;
    return busy_reason(gpu);
}

void ValidationStep::settle_proofs(const Inventory& inventory, const std::vector<int>& full_gpus,
                                   std::uint64_t memory_in_use_min_mib, ValidationSummary& summary) {
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    for (const Gpu& gpu : inventory.gpus) {
        const bool full = std::find(full_gpus.begin(), full_gpus.end(), gpu.index) != full_gpus.end();
        const auto busy = busy_reason(gpu);
        const auto ran = [&](const CheckOutcome& check) { return check.gpu == gpu.index; };
        if (full) {
            // No room for a context where NVML shows the GPU held (another
            // container's processes are not listed, their memory is): busy,
            // its checks not measured (worker_outcome.h).  Where nothing
            // holds it, the GPU failed to open on its own: an error.
            if (const auto held = busy ? busy : memory_held(gpu, memory_in_use_min_mib)) {
                summary.busy.push_back({gpu.index, "no room for a context: " + *held, std::nullopt});
            } else {
                for (CheckOutcome& check : summary.checks)
                    if (check.gpu == gpu.index && check.status == CheckStatus::not_measured) {
                        check.status = CheckStatus::error;
                        check.detail = "the GPU could not be opened, though NVML shows nothing holding it: " +
                                       check.detail;
                    }
            }
        } else if (const auto alone = left_alone(gpu)) {
            const ProofMemory::Proof* proof = proofs_->find(gpu.uuid);
            summary.busy.push_back({gpu.index, *alone, proof ? std::optional<std::int64_t>(proof->at) : std::nullopt});
            if (proof) {
                summary.checks.insert(summary.checks.end(), proof->checks.begin(), proof->checks.end());
                summary.proofs.push_back({gpu.index, proof->at});
            }
        } else if (std::any_of(summary.checks.begin(), summary.checks.end(), ran)) {
            summary.proofs.push_back({gpu.index, now});
            if (proofs_) {
                ProofMemory::Proof proof{{}, now};
                std::copy_if(summary.checks.begin(), summary.checks.end(), std::back_inserter(proof.checks),
                             [&](const CheckOutcome& check) { return ran(check) && check.status != CheckStatus::unsupported; });
                proofs_->remember(gpu.uuid, std::move(proof));
            }
        }
    }
}

CheckVerdicts verdicts_of(const ValidationSummary& summary) {
    CheckVerdicts verdicts;
    for (const auto& check : summary.checks) {
        CheckVerdict verdict;
        switch (check.status) {
            case CheckStatus::passed: verdict.state = CheckState::passed; break;
            case CheckStatus::unsupported: verdict.state = CheckState::unsupported; break;
            case CheckStatus::not_measured: continue;  // proves nothing: as if the check had not been asked for
            case CheckStatus::failed:
                verdict.state = CheckState::failed;
                verdict.summary = fmt::format("max relative error {:.3g} exceeds the tolerance {:.3g}",
                                              check.max_rel_error, check.tolerance);
                break;
            case CheckStatus::error:
            case CheckStatus::timeout:
                verdict.state = CheckState::failed;
                verdict.summary =
                    fmt::format("{}{}", to_string(check.status), check.detail.empty() ? "" : ": " + check.detail);
                break;
        }
        verdicts[{check.gpu, check.name}] = verdict;
    }
    return verdicts;
}

}  // namespace provision
