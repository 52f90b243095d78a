// Where a run's node labels and metrics are written: read from the command
// line (src/app), used by the publishing stage (src/publish).  A leaf, so
// the options reach no further than these four fields.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace provision {

struct PublishTargets {
    std::string node_labels;  // --node-labels: the NFD feature file; "" writes none
    std::string metrics;      // --metrics: the node-exporter textfile (*.prom); "" writes none
    // Kept fresh (--repeat): the labels say when NFD must drop them if no
    // later round has replaced them (the process killed without SIGTERM).
    std::optional<std::chrono::seconds> labels_expire_after;
    // --repeat: when this round began, in milliseconds after the process
    // started, so the phase metrics count from the round, not the process.
    double round_started_ms = 0;
    // Each file written is removed when a signal stops provision (while it
    // is still that file): src/core/termination.
    bool remove_at_termination = false;

    bool any() const { return !node_labels.empty() || !metrics.empty(); }
};

}  // namespace provision
