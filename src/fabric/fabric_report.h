// What the multi-node NVLink stage found (docs/DESIGN.md "Multi-node
// NVLink"): the cliques of the visible GPUs, whether NCCL would check fabric
// handles at init, the IMEX channels, the workers' handle checks, and the
// findings and settings that follow.  Empty (`ran` false) where the fabric
// is no multi-node NVLink domain: a cluster UUID of zero, as on HGX H100/H200.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric/imex_channels.h"
#include "gpu/copy_check.h"
#include "health/findings.h"
#include "nccl/mnnvl_settings.h"
#include "workload_env/user_values.h"

namespace provision {

// GPUs of one cluster UUID and clique id: one NVLink domain beyond the node.
struct FabricCliqueGroup {
    std::string cluster_uuid;  // 32 hex digits
    unsigned clique_id = 0;
    std::vector<int> gpus;     // CUDA indices of this node's GPUs in it
};

struct FabricReport {
    bool ran = false;
    std::vector<FabricCliqueGroup> cliques;
    MnnvlSettings settings;               // NCCL_MNNVL_* as the workload gets them
    bool nccl_checks = false;             // NCCL would check fabric handles at init: the workers check first
    std::string nccl_checks_why;          // in words, for --explain and the report
    unsigned job_clique_gpus = 0;         // the clique as NCCL counts it: this node's GPUs in it times the nodes
    std::optional<ImexChannels> imex;     // read only where `ran`
    std::vector<FabricHandleCheck> handles;  // one per GPU checked
    std::optional<bool> proven;           // every handle check passed; nullopt: none ran
    std::vector<Finding> findings;
    std::vector<UserDecision> decided;    // NCCL_MNNVL_ENABLE=0 and the workarounds: written or kept
};

}  // namespace provision
