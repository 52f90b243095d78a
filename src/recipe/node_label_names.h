// The names of the node labels provision writes for itself (docs/DESIGN.md,
// "Labels (--node-labels)"), which recipes must not take: each feature of the
// recipes is a label of its own bare name (tf32, fp8), and each mechanism's
// is "attention." and its name, so a feature called "validated" or
// "attention.flash3" would write a second, conflicting line of a label
// provision writes, of which Node Feature Discovery keeps one.  The label
// table of src/publish/node_labels.cpp writes exactly these names besides the
// features' and mechanisms' (tests/unit/publish_node_labels_test.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

// "verdict", "validated", "gpu.count", ...: every label name provision
// writes that is not a feature's or a mechanism's.
const std::vector<std::string_view>& builtin_label_names();

// Where each mechanism's label lives: "attention.<mechanism>".
inline constexpr std::string_view kMechanismLabelPrefix = "attention.";

// Why a feature may not be called `name` (it is a built-in label's name, or
// under kMechanismLabelPrefix), or nullopt.
std::optional<std::string> reserved_label_problem(std::string_view name);

}  // namespace provision
