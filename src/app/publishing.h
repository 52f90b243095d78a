// The publishing step of a run: the node's labels and the run's metrics for
// the cluster's tools (src/publish), from the finished report, or from a run
// that stopped before it had one, so that an earlier run's
// `validated=true` never outlives a failed one.
#pragma once

#include "app/options.h"
#include "app/pipeline.h"
#include "core/error.h"

namespace provision {

// After the env file, before the summary: writes what options.publish asks
// for.  Labels left out and files that could not be written become notes of
// the report; a file that could not be written makes a run without a
// COMMAND exit 6 (with one, the workload still starts).
void publish_finished_run(Plan& plan, const Options& options);

// A run that stopped before its report (a usage error, a malformed recipe
// or fixture): labels and metrics that say it failed.  A file that cannot
// be written is a warning on stderr; the run fails either way.
void publish_stopped_run(const Options& options, const Error& error);

}  // namespace provision
