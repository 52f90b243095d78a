#include "app/repeat.h"

#include <cstdio>
#include <exception>
#include <thread>

#include "app/pipeline.h"
#include "app/publishing.h"
#include "core/termination.h"

namespace provision {
namespace {

// One round: the whole run, its failure published as a stopped run.
void run_round(const Options& options) {
    try {
        (void)carry_out(plan_run(options), options);
    } catch (const Error& error) {
        std::fprintf(stderr, "provision: error: %s\n", error.what());
        publish_stopped_run(options, error);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "provision: internal error: %s\n", error.what());
        publish_stopped_run(options, Error(static_cast<ExitCode>(1), error.what()));  // main's exit 1
    }
    std::fflush(stderr);
}

}  // namespace

std::chrono::seconds labels_lifetime(std::chrono::milliseconds interval) {
    return std::chrono::ceil<std::chrono::seconds>(2 * interval) + std::chrono::seconds(60);
}

void run_repeatedly(const Options& options) {
    Options round = options;
    round.publish.labels_expire_after = labels_lifetime(*options.repeat_interval);
    for (const auto* path : {&round.publish.node_labels, &round.publish.metrics})
        if (!path->empty()) remove_at_termination(*path);
    for (;;) {
        const auto started = std::chrono::steady_clock::now();
        run_round(round);
        std::this_thread::sleep_until(started + *options.repeat_interval);
    }
}

}  // namespace provision
