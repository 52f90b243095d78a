// The node's labels for the Kubernetes scheduler, as a Node Feature
// Discovery local-source file (…/features.d/provision): what the GPUs are,
// whether they passed provision's checks and when, which hardware paths
// they proved, and how healthy they are.  Only facts about the node
// (hardware, driver, validation, health), never about an image's Python
// packages: the labels are written by a DaemonSet whose image is not the
// workload's.  docs/DESIGN.md lists every label.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "publish/published_run.h"

namespace provision {

struct NodeLabel {
    std::string key;    // "PREFIX/NAME"
    std::string value;
};

struct NodeLabels {
    std::vector<NodeLabel> labels;      // every one valid by Kubernetes' rules, in the table's order
    std::vector<std::string> left_out;  // "KEY: why", for each label that would not have been valid
};

// The labels of `run` under `prefix` (already checked: node_label_prefix()).
NodeLabels node_labels(const PublishedRun& run, const std::string& prefix);

// The file NFD reads: a comment header, `# +expiry-time=` (RFC 3339) when
// `expires` is set so that the labels vanish if nothing refreshes them, one
// KEY=VALUE line per label, and a comment for each label left out.
std::string render_feature_file(const NodeLabels& labels, const PublishedRun& run,
                                const std::optional<std::chrono::system_clock::time_point>& expires);

}  // namespace provision
