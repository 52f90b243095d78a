#include "fabric/fabric_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace provision {

FabricReport plan_fabric(const Inventory& inventory, const NcclPaths& paths, bool nccl_installed,
                         const MnnvlSettings& settings, int job_nodes) {
    FabricReport report;
    report.settings = settings;
    if (inventory.gpus.empty()) return report;
    for (const Gpu& gpu : inventory.gpus) {
        if (!gpu.fabric || gpu.fabric->state != FabricState::completed) return report;
        if (!gpu.fabric->multi_node() && !settings.uuid) return report;
    }
    report.ran = true;
    for (const Gpu& gpu : inventory.gpus) {
        const std::string uuid =
            settings.uuid ? fmt::format("{:016x}{:016x}", static_cast<unsigned long long>(*settings.uuid),
                                        static_cast<unsigned long long>(*settings.uuid))
                          : gpu.fabric->cluster_uuid;
        // -2 (a hash of the rack's serial, NCCL 2.28) is not known here: NVML's stands.
        const unsigned clique = settings.clique_id && *settings.clique_id >= 0
                                    ? static_cast<unsigned>(*settings.clique_id)
                                    : gpu.fabric->clique_id;
        auto it = std::find_if(report.cliques.begin(), report.cliques.end(), [&](const FabricCliqueGroup& group) {
            return group.cluster_uuid == uuid && group.clique_id == clique;
        });
        if (it == report.cliques.end()) it = report.cliques.insert(report.cliques.end(), {uuid, clique, {}});
        it->gpus.push_back(gpu.index);
    }
    std::size_t largest = 0;
    for (const auto& clique : report.cliques) largest = std::max(largest, clique.gpus.size());
    const unsigned nodes = static_cast<unsigned>(std::max(job_nodes, 1));
    report.job_clique_gpus = static_cast<unsigned>(largest) * nodes;
    if (settings.off())
        report.nccl_checks_why = "NCCL_MNNVL_ENABLE=0: NCCL takes no multi-node NVLink";
    else if (!nccl_installed)
        report.nccl_checks_why = "no NCCL is installed for the workload";
    else if (paths.peer != PeerPath::cumem_fd)
        report.nccl_checks_why = "the workload's NCCL does not use cuMem, without which it takes no multi-node NVLink";
    else if (report.job_clique_gpus < 2)
        report.nccl_checks_why = "a clique of one GPU: NCCL has no peer to reach over the fabric";
    else {
        report.nccl_checks = true;
        report.nccl_checks_why = fmt::format("a clique of {} GPUs{}: NCCL checks fabric handles at init", report.job_clique_gpus,
                                             nodes > 1 ? fmt::format(" ({} here, on each of {} nodes)", largest, nodes) : "");
    }
    return report;
}

}  // namespace provision
