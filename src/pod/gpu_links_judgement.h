// Judges each visible GPU's own links and the pod's mix of models, from
// NVML's readings (or a fixture's) and the host copies the check measured.
// Pure: every input is a value.
//
//   nvlink_inactive  a GPU has fewer active NVLinks than it lists, or lists
//                    fewer than another GPU of its model in the pod (a pod of
//                    one GPU copies to no peer: nothing)
//   mixed_gpus       GPUs of more than one model: the least capable decides
//                    the selection for all
//   pcie_degraded    a GPU's PCIe link runs below its maximum width, or below
//                    its maximum generation while busy (an idle link trains
//                    down to save power, so an idle reading of the generation
//                    is not judged), or a pinned host copy ran under the
//                    recipes' share of what the link gives
#pragma once

#include <vector>

#include "gpu/inventory.h"
#include "health/findings.h"
#include "gpu/copy_check.h"
#include "recipe/recipe.h"

namespace provision {

std::vector<Finding> judge_nvlinks(const Inventory& inventory, const HealthPolicy& policy);

std::vector<Finding> judge_gpu_models(const Inventory& inventory, const HealthPolicy& policy);

std::vector<Finding> judge_host_links(const Inventory& inventory, const CopyChecks& checks, const RecipeSet& recipes);

}  // namespace provision
