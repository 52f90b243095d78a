#include "app/publishing.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "core/terminal.h"
#include "core/file_identity.h"
#include "core/termination.h"
#include "publish/publish.h"
#include "recipe/builtin_recipes.h"

namespace provision {
namespace {

// Which recipe set decided: the built-in one's digest, or "replaced" where
// PROVISION_BUILTIN_RECIPES put a folder in its place.
std::string recipes_digest(const Options& options) {
    if (!options.builtin_recipes.empty()) return "replaced";
    return std::string(embedded_recipes_digest());
}

PublishedRun finished_run(const Plan& plan, const Options& options) {
    return {&plan.report, &plan.recipes, plan.exit_code, std::chrono::system_clock::now(), recipes_digest(options),
            options.publish.round_started_ms};
}

}  // namespace

void remove_published_files_at_termination(Options& options) {
    options.publish.remove_at_termination = true;
    for (const auto* path : {&options.publish.node_labels, &options.publish.metrics})
        if (!path->empty())
            if (const auto found = regular_file_at(*path)) remove_at_termination(*path, *found);
}

void publish_finished_run(Plan& plan, const Options& options) {
    if (!options.publish.any()) return;
    const bool fails_the_run = options.command.empty();
    PublishedRun run = finished_run(plan, options);
    auto take = [&](PublishOutcome outcome) {
        add_messages(plan.report.messages, Severity::note, outcome.notes);
        // Without a workload a file not written fails the run (exit 6).
        add_messages(plan.report.messages, fails_the_run ? Severity::error : Severity::warning, outcome.failures);
        if (!outcome.failures.empty() && fails_the_run && plan.exit_code == ExitCode::ok)
            run.exit_code = plan.exit_code = ExitCode::io_failure;
    };
    // The labels first: the metrics then carry an exit status that tells
    // when the labels could not be written.
    PublishTargets labels = options.publish, metrics = options.publish;
    labels.metrics.clear();
    metrics.node_labels.clear();
    take(publish(run, labels));
    take(publish(run, metrics));
}

void publish_exit_code(Plan& plan, const Options& options, ExitCode code) {
    if (code == plan.exit_code) return;
    plan.exit_code = code;
    if (!options.publish.any()) return;
    // The summary is out: a file that cannot be written now is said on stderr.
    for (const auto& failure : publish(finished_run(plan, options), options.publish).failures)
        print_message("warning", failure);
}

void publish_stopped_run(const Options& options, const Error& error) {
    if (!options.publish.any()) return;
    const PublishedRun run{nullptr, nullptr, error.code(), std::chrono::system_clock::now(), recipes_digest(options)};
    for (const auto& failure : publish(run, options.publish).failures) print_message("warning", failure);
}

}  // namespace provision
