#include "app/publishing.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "core/terminal.h"
#include "core/file_identity.h"
#include "core/termination.h"
#include "publish/publish.h"

namespace provision {
namespace {

PublishedRun finished_run(const Plan& plan, const PublishSettings& settings) {
    return {&plan.report, &plan.recipes, plan.exit_code, std::chrono::system_clock::now(), settings.recipes_digest,
            settings.targets.round_started_ms};
}

}  // namespace

void remove_published_files_at_termination(PublishTargets& targets) {
    targets.remove_at_termination = true;
    for (const auto* path : {&targets.node_labels, &targets.metrics})
        if (!path->empty())
            if (const auto found = regular_file_at(*path)) remove_at_termination(*path, *found);
}

void publish_finished_run(Plan& plan, const PublishSettings& settings) {
    if (!settings.targets.any()) return;
    PublishedRun run = finished_run(plan, settings);
    auto take = [&](PublishOutcome outcome) {
        add_messages(plan.report.messages, Severity::note, outcome.notes);
        // Without a workload a file not written fails the run (exit 6).
        add_messages(plan.report.messages, settings.fails_the_run ? Severity::error : Severity::warning,
                     outcome.failures);
        if (!outcome.failures.empty() && settings.fails_the_run && plan.exit_code == ExitCode::ok)
            run.exit_code = plan.exit_code = ExitCode::io_failure;
    };
    // The labels first: the metrics then carry an exit status that tells
    // when the labels could not be written.
    PublishTargets labels = settings.targets, metrics = settings.targets;
    labels.metrics.clear();
    metrics.node_labels.clear();
    take(publish(run, labels));
    take(publish(run, metrics));
}

void publish_exit_code(Plan& plan, const PublishSettings& settings, ExitCode code) {
    if (code == plan.exit_code) return;
    plan.exit_code = code;
    if (!settings.targets.any()) return;
    // The summary is out: a file that cannot be written now is said on stderr.
    for (const auto& failure : publish(finished_run(plan, settings), settings.targets).failures)
        print_message("warning", failure);
}

void publish_stopped_run(const PublishSettings& settings, const Error& error) {
    if (!settings.targets.any()) return;
    const PublishedRun run{nullptr, nullptr, error.code(), std::chrono::system_clock::now(), settings.recipes_digest};
    for (const auto& failure : publish(run, settings.targets).failures) print_message("warning", failure);
}

}  // namespace provision
