// The order in which the pairs of GPUs copy to each other: rounds in which
// every GPU takes part in at most one pair, so that all GPUs are busy at
// once and no GPU holds more than one peer mapping at a time (without
// NVSwitch a GPU has at most 8 peer connections; docs/DESIGN.md).
#pragma once

#include <utility>
#include <vector>

namespace provision {

using GpuIndexPair = std::pair<int, int>;

// The round-robin ("circle") schedule of every GPU the pairs name, keeping
// only the pairs asked for: for N GPUs all of whose pairs are asked, N - 1
// rounds (N even) or N rounds (N odd).  Each pair appears once.
std::vector<std::vector<GpuIndexPair>> link_rounds(const std::vector<GpuIndexPair>& pairs);

}  // namespace provision
