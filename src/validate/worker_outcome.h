// From what a worker process did to one outcome per requested check.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "validate/child_process.h"
#include "validate/validation.h"

namespace provision {

// A check with a result line keeps it; the others are "timeout" when the
// worker was killed at the limit, else "error" saying how the worker ended
// (could not start, died of a signal, exited without a result, printed
// something else) with the last line of its stderr.
std::vector<CheckOutcome> outcomes_from_worker(const GpuChecks& job, const ChildOutcome& child, double timeout_s);

// check_worker_main with its streams passed in (for tests).
int run_check_worker(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace provision
