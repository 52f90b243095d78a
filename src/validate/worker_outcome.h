// From what a worker process did to one outcome per requested check.
#pragma once

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "validate/child_process.h"
#include "validate/validation.h"
#include "validate/worker_protocol.h"

namespace provision {

// A check with a result line keeps it; the others are "timeout" when the
// worker was killed at a limit (`limits.open_s` while it was opening its
// GPU, else `limits.work_s`), else "error" saying how the worker ended
// (could not start, could not open its GPU, died of a signal, exited
// without a result, printed something else) with the last line of its
// stderr.  A worker that opened another GPU than `expected_uuid` (when both
// are known) has every check an error that names both.  `killed_for`: the
// GPU whose limit killed the process this GPU's worker shared with it (its
// missing checks are errors that say so, not timeouts).
std::vector<CheckOutcome> outcomes_from_worker(const GpuChecks& job, const ChildOutcome& child,
                                               const WorkerOutput& output, const WorkerLimits& limits,
                                               const std::string& expected_uuid = {},
                                               std::optional<int> killed_for = std::nullopt);

// check_worker_main with its streams passed in (for tests).
int run_check_worker(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace provision
