// The publishing step of a run: the node's labels and the run's metrics for
// the cluster's tools (src/publish), from the finished report, or from a run
// that stopped before it had one, so that an earlier run's
// `validated=true` never outlives a failed one.  A signal that stops the
// run removes them instead (see remove_published_files_at_termination).
#pragma once

#include "app/options.h"
#include "app/pipeline.h"
#include "core/error.h"

namespace provision {

// From the start of the run: a signal that stops provision (SIGTERM, SIGINT,
// SIGHUP; before the handoff, or at any time with --repeat) removes the
// labels and metrics files, so that no claim outlives a run that could not
// finish: the regular file found at each path now (an earlier run's), and
// then each file this process writes there (options.publish's
// remove_at_termination), each only while the path still names that very
// file (src/core/termination).
void remove_published_files_at_termination(Options& options);

// After the env file, before the summary: writes what options.publish asks
// for.  Labels left out and files that could not be written become notes of
// the report; a file that could not be written makes a run without a
// COMMAND exit 6 (with one, the workload still starts).
void publish_finished_run(Plan& plan, const Options& options);

// The run's exit status changed after its files were written (its report
// could not be written to stdout: 6; the COMMAND could not be started: 126,
// 127): they are written again, so that provision_exit_code is the status
// the process exits with.  Nothing happens when `code` is the status
// published.
void publish_exit_code(Plan& plan, const Options& options, ExitCode code);

// A run that stopped before its report (a usage error, a malformed recipe
// or fixture, an internal error): labels and metrics that say it failed.  A
// file that cannot be written is a warning on stderr; the run fails either
// way.
void publish_stopped_run(const Options& options, const Error& error);

}  // namespace provision
