// The pod stage: the pod as a whole rather than each GPU alone.  The links
// between the visible GPUs (NVML's topology, the copy check's measurements
// or the recipes' known-broken table), each GPU's NVLink and PCIe links, the
// mix of GPU models, and the container's limits become findings weighed by
// the recipes' [policy]; broken peer paths become settings for NCCL and the
// workload's launcher.  A pod of one GPU has no pairs and says nothing about
// links.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload_env/env_settings.h"
#include "gpu/inventory.h"
#include "health/findings.h"
#include "pod/container_limits.h"
#include "gpu/copy_check.h"
#include "nccl/nccl_library.h"
#include "nccl/nccl_paths.h"
#include "pod/host_facts.h"
#include "pod/link_judgement.h"
#include "pod/nccl_judgement.h"
#include "pod/peer_access_settings.h"
#include "recipe/recipe.h"

namespace provision {

// The workload's NCCL and the paths it takes (nccl/).
struct NcclFacts {
    std::optional<NcclLibrary> library;  // absent where no NCCL is installed for the workload
    NcclPaths paths;
    // NCCL would check multi-node NVLink at init (fabric/fabric_plan.h): the
    // GPU workers make the same check first.
    bool fabric_handle_check = false;
};

struct PodReport {
    std::vector<LinkReport> links;              // one per pair of visible GPUs, in CUDA's order
    std::vector<HostCopyResult> host_copies;    // per GPU, where the copies ran
    std::vector<HostMemoryResult> host_memory;  // per GPU, where NCCL's cuMem host memory was checked
    std::optional<NcclAllReduceResult> nccl_all_reduce;  // --validate=full
    std::vector<std::optional<LinkErrorCounts>> link_errors_after;  // by GPU index, where read again after the copies
    ContainerLimits container;
    HostFacts host;
    NcclFacts nccl;
    PeerAccessPlan peer_access;                 // what NCCL and the launcher are told
    NcclJudgement nccl_judgement;               // NCCL's own settings (NCCL_CUMEM_ENABLE, ...)
    std::vector<Finding> findings;              // in the order: links, NVLinks, models, PCIe, container, NCCL
};

// Pure: everything comes in as values.
PodReport judge_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                    const CopyChecks& checks, const ContainerLimits& container, const HostFacts& host,
                    const NcclFacts& nccl, const UserValues& users);

// judge_pod with the container's limits and the host's facts read from this
// process's system (`sysfs`: where /sys is).
PodReport assess_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                     const CopyChecks& checks, const NcclFacts& nccl, const UserValues& users,
                     const std::string& sysfs = "/sys");

// Writes the pod's settings into the workload's (the user's values stay).
void add_pod_settings(const PodReport& pod, EnvSettings& env);

}  // namespace provision
