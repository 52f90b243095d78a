#include "fabric/fabric_judgement.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"
#include "gpu/nvml_fabric.h"
#include "nccl/nccl_version.h"

namespace provision {
namespace {

std::string nccl_name(const std::optional<NcclLibrary>& nccl) {
    return nccl && !nccl->version.empty() ? fmt::format("NCCL {}", echoed(nccl->version))
                                          : std::string("the workload's NCCL");
}

// name=value as the user's own values allow; the words say which it is.
std::string decide(FabricReport& report, const UserValues& users, const std::string& name, const std::string& value) {
    const UserDecision decided = users.decide(name, value);
    if (std::none_of(report.decided.begin(), report.decided.end(),
                     [&](const UserDecision& known) { return known.name == name; }))
        report.decided.push_back(decided);
    if (decided.kept) return fmt::format("the environment's {}={} stays", name, echoed(decided.kept->value));
    return fmt::format("{}={} is written", name, value);
}

std::string why_no_channel(const ImexChannels& imex) {
    if (!imex.major) return "/proc/devices lists no nvidia-caps-imex-channels (the driver made no IMEX channels)";
    if (!imex.folder) return "the container has no /dev/nvidia-caps-imex-channels";
    if (imex.channels.empty()) return "/dev/nvidia-caps-imex-channels holds no channel";
    const ImexChannel& first = imex.channels.front();
    return fmt::format("{} {}{}", first.name, first.detail,
                       imex.channels.size() > 1 ? fmt::format(" (and {} more channels, none usable)", imex.channels.size() - 1)
                                                : std::string());
}

bool same_version(const std::string& a, const std::string& b) {
    const auto x = parse_nccl_version(a), y = parse_nccl_version(b);
    return x && y && x->parts == y->parts;
}

}  // namespace

void judge_fabric(FabricReport& report, const Inventory& inventory, const std::optional<NcclLibrary>& nccl,
                  const std::vector<FabricHandleCheck>& handles, const PodRecipe& recipe, const HealthPolicy& policy,
                  const UserValues& users, bool apply_workarounds) {
    const auto add = [&](int gpu, const char* signal, std::string words) {
        const int nvml = gpu >= 0 && gpu < static_cast<int>(inventory.gpus.size()) ? inventory.gpus[gpu].nvml_index : -1;
        report.findings.push_back({gpu, nvml, signal, policy.level(signal), std::move(words)});
    };
    // The fabric's own health, wherever the driver reports it (no work: NVML's answer is in).
    for (const Gpu& gpu : inventory.gpus) {
        if (!gpu.fabric || gpu.fabric->state != FabricState::completed) continue;
        auto problems = gpu.fabric->health_mask ? fabric_health_problems(*gpu.fabric->health_mask)
                                                : std::vector<std::string>{};
        const FabricHealth health = gpu.fabric->health;
        if (problems.empty() && health != FabricHealth::unhealthy && health != FabricHealth::limited_capacity) continue;
        add(gpu.index, "fabric_unhealthy",
            fmt::format("GPU {}'s NVLink fabric reports {}{}: NCCL's traffic over it may be slow or fail", gpu.index,
                        health == FabricHealth::unknown ? std::string("problems") : std::string(to_string(health)),
                        problems.empty() ? std::string() : fmt::format(" ({})", fmt::join(problems, ", "))));
    }
    if (!report.ran) return;

    if (report.imex && !report.imex->any_usable())
        add(-1, "imex_channel_missing",
            fmt::format("the GPUs are in a multi-node NVLink domain (cluster {}), but no IMEX channel is usable here: "
                        "{}; memory with a fabric handle then fails (CUDA error 800, operation not permitted){}",
                        report.cliques.front().cluster_uuid, why_no_channel(*report.imex),
                        report.nccl_checks ? fmt::format(", and {} would stop the job at init", nccl_name(nccl))
                                           : std::string()));

    report.handles = handles;
    if (!handles.empty()) {
        bool all_passed = true;
        const FabricHandleCheck* failed = nullptr;
        std::vector<int> failed_gpus;
        for (const FabricHandleCheck& check : handles) {
            all_passed = all_passed && check.status == FabricHandleStatus::passed;
            if (check.status != FabricHandleStatus::failed) continue;
            if (!failed) failed = &check;
            failed_gpus.push_back(check.gpu);
        }
        report.proven = all_passed;
        if (failed) {
            std::string cause;
            if (failed->cuda_error == 800)
                cause = "; CUDA's 800 here means no IMEX channel this process may write";
            else if (failed->cuda_error == 400)
                cause = "; an import refused with 'invalid resource handle' where the ComputeDomain's IMEX daemons "
                        "do not broker this node (NVIDIA/k8s-dra-driver-gpu#1417)";
            add(failed->gpu, "mnnvl_handle_failed",
                fmt::format("GPU{} {}: memory with a fabric handle could not be shared ({}){}; {} would stop the job "
                            "at init (\"MNNVL (cliqueSize {}) is available but not working on this system\", an error "
                            "since NCCL 2.27), so {} and the job runs over NCCL's other transports",
                            failed_gpus.size() > 1 ? "s" : "", fmt::join(failed_gpus, ", "), failed->detail, cause,
                            nccl_name(nccl), report.job_clique_gpus,
                            decide(report, users, "NCCL_MNNVL_ENABLE", "0")));
        }
    }

    if (nccl && report.job_clique_gpus > 0)
        for (const NcclDefect& defect : recipe.nccl_defects) {
            const bool version = std::any_of(defect.nccl_versions.begin(), defect.nccl_versions.end(),
                                             [&](const std::string& v) { return same_version(v, nccl->version); });
            if (!version || report.job_clique_gpus < defect.min_clique_gpus || report.settings.off()) continue;
            std::vector<std::string> workaround;
            for (const auto& [name, value] : defect.workaround)
                workaround.push_back(apply_workarounds ? decide(report, users, name, value)
                                                       : fmt::format("{}={}", name, value));
            add(-1, "nccl_known_defect",
                fmt::format("{} has a known defect ({}) on multi-node NVLink cliques of {} GPUs or more, and this "
                            "job's clique has {}: {}; {}",
                            nccl_name(nccl), defect.name, defect.min_clique_gpus, report.job_clique_gpus, defect.source,
                            apply_workarounds ? fmt::format("the workaround: {}", fmt::join(workaround, ", "))
                                              : fmt::format("the workaround, {}, is written with --apply-workarounds",
                                                            fmt::join(workaround, ", "))));
        }
}

void add_fabric_settings(const FabricReport& report, EnvSettings& env) { UserValues::apply(report.decided, env); }

}  // namespace provision
