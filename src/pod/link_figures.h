// What the recipes say a link gives ([[pod.nvlink]], [[pod.pcie]] in
// recipes/pod.toml), to hold measured copies against.
#pragma once

#include <optional>
#include <string>

#include "gpu/inventory.h"
#include "recipe/pod_recipe.h"

namespace provision {

struct ExpectedBandwidth {
    double gb_per_s = 0;  // one direction
    bool estimate = false;
    std::string basis;    // "NVLink 4, 18 links", "PCIe Gen4 x16"
};

// A peer copy between the pair's GPUs: n links of their NVLink generation
// (NVML's, else their architecture's), or the slower of the two GPUs' PCIe
// links at their maximum generation and width.  nullopt where the recipes
// or NVML cannot say.
std::optional<ExpectedBandwidth> expected_peer_bandwidth(const GpuPair& pair, const Gpu& first, const Gpu& second,
                                                         const PodRecipe& recipe);

// A pinned copy between the host and `gpu`: its PCIe link at the maximum
// generation and width.
std::optional<ExpectedBandwidth> expected_host_bandwidth(const Gpu& gpu, const PodRecipe& recipe);

}  // namespace provision
