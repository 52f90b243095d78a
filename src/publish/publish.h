// The publishing stage: after the report is final, the node's labels (a
// Node Feature Discovery feature file) and the run's metrics (a
// node-exporter textfile) are written where asked, each through the atomic
// writer (a temporary name in the same folder, then rename; only a regular
// file is ever replaced), so a reader sees the old file or the new one.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/publish_targets.h"
#include "publish/published_run.h"

namespace provision {

// The prefix of every label when no recipe sets [node_labels] prefix:
// outside kubernetes.io, and a single DNS label, so it claims no one's domain.
inline constexpr std::string_view kDefaultLabelPrefix = "provision";

// The label prefix `recipes` set, the default without one.  The recipe
// loader refuses a prefix Kubernetes would refuse (an empty one included),
// so every prefix here is valid.
std::string node_label_prefix(const RecipeSet* recipes);

struct PublishOutcome {
    std::vector<std::string> notes;     // labels left out, a metrics file node-exporter will not read
    std::vector<std::string> failures;  // files that could not be written, each with why
};

// Writes the labels and the metrics of `run` to `targets`.  The labels use
// node_label_prefix(run.recipes).
PublishOutcome publish(const PublishedRun& run, const PublishTargets& targets);

}  // namespace provision
