// The publishing step of a run: the node's labels and the run's metrics for
// the cluster's tools (src/publish), from the finished report, or from a run
// that stopped before it had one, so that an earlier run's
// `validated=true` never outlives a failed one.  A signal that stops the
// run removes them instead (see remove_published_files_at_termination).
#pragma once

#include <string>

#include "app/pipeline.h"
#include "core/error.h"
#include "core/publish_targets.h"

namespace provision {

// What the publishing step is handed (app/stage_settings.h builds it).
struct PublishSettings {
    PublishTargets targets;      // --node-labels, --metrics
    std::string recipes_digest;  // the built-in recipes' digest, "replaced" where a folder stood in for them
    bool fails_the_run = true;   // no COMMAND: a file not written fails the run (exit 6)
};

// From the start of the run: a signal that stops provision (SIGTERM, SIGINT,
// SIGHUP; before the handoff, or at any time with --repeat) removes the
// labels and metrics files, so that no claim outlives a run that could not
// finish: the regular file found at each path now (an earlier run's), and
// then each file this process writes there (`targets`'
// remove_at_termination), each only while the path still names that very
// file (src/core/termination).
void remove_published_files_at_termination(PublishTargets& targets);

// After the env file, before the summary: writes what `settings` ask for.
// Labels left out and files that could not be written become notes of the
// report; a file that could not be written makes a run without a COMMAND
// exit 6 (with one, the workload still starts).
void publish_finished_run(Plan& plan, const PublishSettings& settings);

// The run's exit status changed after its files were written (its report
// could not be written to stdout: 6; the COMMAND could not be started: 126,
// 127): they are written again, so that provision_exit_code is the status
// the process exits with.  Nothing happens when `code` is the status
// published.
void publish_exit_code(Plan& plan, const PublishSettings& settings, ExitCode code);

// A run that stopped before its report (a usage error, a malformed recipe
// or fixture, an internal error): labels and metrics that say it failed.  A
// file that cannot be written is a warning on stderr; the run fails either
// way.
void publish_stopped_run(const PublishSettings& settings, const Error& error);

}  // namespace provision
