// Judges each pair of visible GPUs from NVML's topology and what the copy
// check measured, or, where no check ran, the recipes' known-broken table.
// Pure: every input is a value.
//
//   p2p_unavailable  NVML (or CUDA, cuDeviceCanAccessPeer in the check) says no peer access:
//                    NCCL moves the pair's data through host memory
//   p2p_broken       peer access claimed, but a copy hung, failed or
//                    delivered wrong bytes (a GPU's translating IOMMU named
//                    as the likely cause); or, unmeasured, a known-broken
//                    GPU and driver
//   p2p_slow         copies passed, but one way ran under the recipes'
//                    share of what the path gives
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/inventory.h"
#include "health/findings.h"
#include "gpu/copy_check.h"
#include "pod/host_facts.h"
#include "pod/link_figures.h"
#include "recipe/recipe.h"

namespace provision {

enum class LinkState {
    ok,            // peer access, and copies passed at speed where checked
    unavailable,   // no peer access: NCCL goes through host memory
    broken,        // measured: hung, failed or wrong bytes
    known_broken,  // not measured: the recipes' table
    slow,          // measured: correct, but under the share
    unknown,       // NVML could not say whether peer access is allowed
    not_measured,  // the copy could not run (a GPU not opened, a worker stopped): proves nothing
};

// A pair's state in the words of the JSON report's links[].state and the
// metrics: "ok", "unavailable", "broken", "known-broken", "slow", "unknown", "not-measured".
std::string_view to_string(LinkState state);
// Every state, in the order above.
const std::vector<LinkState>& all_link_states();

struct LinkReport {
    GpuPair pair;
    LinkState state = LinkState::unknown;
    std::optional<PeerCopyResult> check;        // oriented as `pair` (forward: first -> second); none where none ran
    std::optional<ExpectedBandwidth> expected;  // what the path gives, where the recipes know
    const KnownBrokenPeerAccess* rule = nullptr;  // with known_broken: the recipes' rule

    bool broken() const { return state == LinkState::broken || state == LinkState::known_broken; }
};

struct LinkJudgement {
    std::vector<LinkReport> links;  // one per pair, in CUDA's order
    std::vector<Finding> findings;  // one per signal that fired, naming its pairs
};

// `host`: where it names a GPU's IOMMU as translating, a broken pair's
// finding names it as the likely cause.
LinkJudgement judge_links(const Inventory& inventory, const CopyChecks& checks, const RecipeSet& recipes,
                          const HostFacts& host = {});

// The recipes' rule that marks the pair's peer access as broken, or nullptr.
const KnownBrokenPeerAccess* known_broken_rule(const GpuPair& pair, const Inventory& inventory,
                                               const PodRecipe& recipe);

}  // namespace provision
