#include "publish/publish.h"

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/text.h"
#include "publish/metrics.h"
#include "publish/node_labels.h"

namespace provision {
namespace {

// Creates the file's folder when missing (a hostPath the node has not made
// yet), then writes it whole or not at all.  The reason when it could not.
std::optional<std::string> write_output(const std::string& path, const std::string& contents, const char* what,
                                        const PublishTargets& targets) {
    const AtomicWriteOptions options{.create_folders = true,
                                     .remove_at_termination = targets.remove_at_termination};
    if (const auto failure = write_file_atomically(path, contents, options))
        return fmt::format("cannot write the {} {}: {}", what, printable(path, 256), failure->message());
    return std::nullopt;
}

}  // namespace

std::string node_label_prefix(const RecipeSet* recipes) {
    if (!recipes || recipes->node_labels.prefix.empty()) return std::string(kDefaultLabelPrefix);
    return recipes->node_labels.prefix;
}

PublishOutcome publish(const PublishedRun& run, const PublishTargets& targets) {
    PublishOutcome outcome;
    if (!targets.node_labels.empty()) {
        const NodeLabels labels = node_labels(run, node_label_prefix(run.recipes));
        for (const auto& note : labels.left_out) outcome.notes.push_back("node label left out: " + note);
        std::optional<std::chrono::system_clock::time_point> expires;
        if (targets.labels_expire_after) expires = run.time + *targets.labels_expire_after;
        if (auto failure = write_output(targets.node_labels, render_feature_file(labels, run, expires), "node labels",
                                        targets))
            outcome.failures.push_back(std::move(*failure));
    }
    if (!targets.metrics.empty()) {
        if (!targets.metrics.ends_with(".prom"))
            outcome.notes.push_back(fmt::format("the metrics file {} does not end in .prom: node-exporter's textfile "
                                                "collector reads only *.prom files",
                                                printable(targets.metrics, 256)));
        if (auto failure = write_output(targets.metrics, render_metrics(run), "metrics", targets))
            outcome.failures.push_back(std::move(*failure));
    }
    return outcome;
}

}  // namespace provision
