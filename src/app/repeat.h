// --repeat SECONDS: provision as a node's watcher (a DaemonSet).  Each round
// detects, weighs health, validates and rewrites the labels and metrics
// (--node-labels, --metrics); no round ever execs a workload.  Rounds never
// overlap: the next starts the interval after the last one started, or at
// once when that one took longer.  Each round's checks run in child workers
// that exit with it, so nothing holds GPU memory between rounds.  A round
// that fails (a recipe URL down, a GPU unhealthy) publishes that it failed
// and the next round tries again.  With --json each round prints its
// report (or, stopped before one, the JSON error document) on one line:
// JSON Lines.  SIGTERM, SIGINT and SIGHUP stop it at any moment: the labels
// and metrics files are removed, each while it is still the file provision
// found there or wrote (so no stale `validated=true` outlives provision),
// the workers killed, exit 128 + N.
#pragma once

#include "app/options.h"

namespace provision {

// The labels expire (NFD drops them) when no round has replaced them for
// two intervals and a minute: the process was killed without a signal it
// could handle, or hangs.
std::chrono::seconds labels_lifetime(std::chrono::milliseconds interval);

[[noreturn]] void run_repeatedly(const Options& options);

}  // namespace provision
