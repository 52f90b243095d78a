#include "pod/nccl_judgement.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"
#include "nccl/nccl_version.h"

namespace provision {
namespace {

std::string nccl_name(const std::optional<NcclLibrary>& nccl) {
    return nccl && !nccl->version.empty() ? fmt::format("NCCL {}", echoed(nccl->version))
                                          : std::string("the workload's NCCL");
}

// A CUDA version's major; nullopt for text that is no version.
std::optional<int> major_of(const std::string& version) {
    const auto release = parse_release(version);
    if (!release) return std::nullopt;
    return release->parts[0];
}

// name=value, as the user's own values allow (user_values.h); the words
// say which it is.
std::string setting(NcclJudgement& judgement, const UserValues& users, const std::string& name,
                    const std::string& value) {
    const bool known = std::any_of(judgement.settings.begin(), judgement.settings.end(),
                                   [&](const UserDecision& decided) { return decided.name == name; });
    const UserDecision decided = users.decide(name, value);
    if (!known) judgement.settings.push_back(decided);
    if (decided.kept) return fmt::format("the environment's {}={} stays", name, echoed(decided.kept->value));
    return fmt::format("{}={} is written", name, value);
}

}  // namespace

NcclJudgement judge_nccl(const std::optional<NcclLibrary>& nccl, const NcclPaths& paths, const Inventory& inventory,
                         const CopyChecks& checks, const HostFacts& host, const HealthPolicy& policy,
                         const UserValues& users) {
    NcclJudgement judgement;
    const auto add = [&](int gpu, const std::string& signal, std::string words) {
        const int nvml = gpu >= 0 && gpu < static_cast<int>(inventory.gpus.size()) ? inventory.gpus[gpu].nvml_index : -1;
        judgement.findings.push_back({gpu, nvml, signal, policy.level(signal), std::move(words)});
    };
    if (nccl && major_of(nccl->cuda) && major_of(inventory.driver.cuda) &&
        *major_of(nccl->cuda) > *major_of(inventory.driver.cuda))
        add(-1, "nccl_driver_too_old",
            fmt::format("{} ({}) is built for CUDA {}, but the driver runs CUDA {} at most: NCCL cannot start; install "
                        "an NCCL (and torch) built for CUDA {}, or a newer driver",
                        nccl_name(nccl), echoed_path(nccl->path), echoed(nccl->cuda), echoed(inventory.driver.cuda),
                        echoed(inventory.driver.cuda)));

    for (const PeerCopyResult& pair : checks.pairs) {
        if (pair.failed_path != PeerPath::cumem_fd || pair.path != PeerPath::legacy_ipc ||
            pair.status != PeerCopyStatus::passed)
            continue;
        add(pair.first, "cumem_p2p_failed",
            fmt::format("GPUs {} and {}: {} shares peer memory through cuMem file descriptors (P2P/CUMEM), which fails "
                        "here ({}); legacy CUDA IPC works, so {} and NCCL takes it",
                        pair.first, pair.second, nccl_name(nccl), pair.failed_path_detail,
                        setting(judgement, users, "NCCL_CUMEM_ENABLE", "0")));
    }
    // Not measured (the nodes did not meet) proves nothing: the rendezvous's
    // own finding says why.
    if (const auto& all_reduce = checks.nccl_all_reduce; all_reduce && all_reduce->status != PeerCopyStatus::passed &&
                                                         all_reduce->status != PeerCopyStatus::not_measured)
        add(-1, "nccl_all_reduce_failed",
            all_reduce->nodes > 1
                ? fmt::format("{} on this node's GPUs failed its part of the all-reduce across the job's {} ranks on "
                              "{} nodes ({}: {}): the other nodes reported no loss that would explain it, so a "
                              "distributed job would fail the same way here; NCCL_DEBUG=INFO in the job's "
                              "environment shows where",
                              nccl_name(nccl), all_reduce->ranks, all_reduce->nodes, to_string(all_reduce->status),
                              all_reduce->detail)
                : fmt::format("{} could not all-reduce across the {} GPUs ({}: {}): a distributed job would fail the "
                              "same way; NCCL_DEBUG=INFO in the job's environment shows where",
                              nccl_name(nccl), all_reduce->ranks, to_string(all_reduce->status), all_reduce->detail));
    for (const HostMemoryResult& memory : checks.host_memory) {
        if (memory.ok || !memory.measured) continue;  // a GPU not opened proves nothing of NCCL's host memory
        std::string cause;
        if (host.mempolicy_refused)
            cause = "; this process may not call get_mempolicy (a seccomp filter: Docker's default profile allows it "
                    "only with --cap-add SYS_NICE)";
        else if (host.seccomp_mode == 2)
            cause = "; the process runs under a seccomp filter, which may refuse NUMA calls (Docker: --cap-add "
                    "SYS_NICE)";
        add(memory.gpu, "cumem_host_failed",
            fmt::format("GPU {}: {} takes its host buffers from cuMem at host NUMA node {}, which fails here ({}){}; {}, "
                        "so NCCL uses /dev/shm{}",
                        memory.gpu, nccl_name(nccl), memory.numa_node, memory.detail, cause,
                        setting(judgement, users, "NCCL_CUMEM_HOST_ENABLE", "0"),
                        paths.falls_back_from_cumem_host
                            ? " (this NCCL would also fall back by itself, with a warning)"
                            : " (this NCCL, older than 2.26.3, would otherwise fail with CUDA error 217)"));
    }
    return judgement;
}

}  // namespace provision
