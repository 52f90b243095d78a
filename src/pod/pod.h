// The pod stage: the pod as a whole rather than each GPU alone.  The links
// between the visible GPUs (NVML's topology, the copy check's measurements
// or the recipes' known-broken table), each GPU's NVLink and PCIe links, the
// mix of GPU models, and the container's limits become findings weighed by
// the recipes' [policy]; broken peer paths become settings for NCCL and the
// workload's launcher.  A pod of one GPU has no pairs and says nothing about
// links.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "env/env_settings.h"
#include "gpu/inventory.h"
#include "health/findings.h"
#include "pod/container_limits.h"
#include "gpu/copy_check.h"
#include "pod/link_judgement.h"
#include "pod/peer_access_settings.h"
#include "recipe/recipe.h"

namespace provision {

struct PodReport {
    std::vector<LinkReport> links;              // one per pair of visible GPUs, in CUDA's order
    std::vector<HostCopyResult> host_copies;    // per GPU, where the copies ran
    ContainerLimits container;
    PeerAccessPlan peer_access;                 // what NCCL and the launcher are told
    std::vector<Finding> findings;              // in the order: links, NVLinks, models, PCIe, container
};

// Pure: everything comes in as values.
PodReport judge_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                    const CopyChecks& checks, const ContainerLimits& container,
                    const std::map<std::string, std::string>& environment);

// judge_pod with the container's limits read from this process's system.
PodReport assess_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                     const CopyChecks& checks, const std::map<std::string, std::string>& environment);

// Writes the pod's settings into the workload's (the user's values stay).
void add_pod_settings(const PodReport& pod, EnvSettings& env);

}  // namespace provision
