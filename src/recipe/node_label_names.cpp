#include "recipe/node_label_names.h"

#include <algorithm>

#include <fmt/format.h>

namespace provision {

const std::vector<std::string_view>& builtin_label_names() {
    // In the order of the label table (src/publish/node_labels.cpp).
    static const std::vector<std::string_view> names = {
        "verdict",        "validated",   "timestamp",   "error",       "validated.timestamp", "validation",        "health",
        "action.container", "action.image", "action.job", "action.node", "action.fleet",
        "gpu.count",      "gpu.family",  "gpu.product", "gpu.compute", "gpu.compute.major", "gpu.compute.minor",
        "driver.version", "cuda.driver", "cuda.driver.major",          "cuda.driver.minor",
        "p2p",            "rdma",        "rdma.link_layer",            "gpudirect",         "gpu.clique",
        "mnnvl"};
    return names;
}

std::optional<std::string> reserved_label_problem(std::string_view name) {
    const auto& names = builtin_label_names();
    if (std::find(names.begin(), names.end(), name) != names.end())
        return fmt::format("'{}' is the name of a node label provision writes itself (PREFIX/{}): a feature's label "
                           "is its name, so it would write a second, conflicting {} label; choose another name",
                           name, name, name);
    if (name.starts_with(kMechanismLabelPrefix))
        return fmt::format("a feature's name may not begin with '{}', where each mechanism's node label is "
                           "(PREFIX/{}MECHANISM); choose another name",
                           kMechanismLabelPrefix, kMechanismLabelPrefix);
    return std::nullopt;
}

}  // namespace provision
