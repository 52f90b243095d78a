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
//   nvlink_errors    an NVLink replay, recovery or symbol-error counter rose
//                    during the copies (DCGM fails on any rise)
//   nvlink_crc_errors  NVLink CRC errors rose during the copies at the
//                    policy's rate a second or more
//   pcie_replays     PCIe replays rose during the copies over the rate the
//                    link's generation and width allow (DCGM's rule)
// A counter that went back (a reset) or was not read again proves nothing.
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

std::vector<Finding> judge_link_errors(const Inventory& inventory, const CopyChecks& checks, const HealthPolicy& policy);

// The PCIe replays DCGM allows a minute on a link of `generation` and
// `width`: 1e-12 x the lane's rate x 60, times the width, rounded up
// (DcgmHealthWatch::GetExpectedPcieReplayRate; generations past 6 as 6).
unsigned pcie_replays_allowed_per_minute(unsigned generation, unsigned width);

}  // namespace provision
