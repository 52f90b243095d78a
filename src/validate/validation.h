// The validate stage: runs the bundled GPU checks, one child process per GPU,
// all GPUs at once, each under a time limit, so that a hung or crashing GPU
// cannot take provision (or the container's start) down with it.
#pragma once

#include <string>
#include <vector>

#include "core/states.h"

namespace provision {

struct ValidationOptions {
    ValidateMode mode = ValidateMode::quick; // quick or full (adds a throughput measurement)
    double timeout_s = 5.0;                  // per GPU, from the start of its worker
    std::string self_exe = "/proc/self/exe"; // the binary whose "__check-worker" runs the checks
    std::string fault;                       // test-only, e.g. "attention.bf16=wrong-result", "*=hang", "*=crash", "*=killed"
};

struct GpuChecks {
    int gpu;                                 // CUDA index as the workload sees it
    std::vector<std::string> checks;
};

// One check's result on one GPU: what the worker reported, or why it has
// none.  The report carries these as they are (ValidationSummary).
struct CheckOutcome {
    int gpu = 0;
    std::string name;
    CheckStatus status = CheckStatus::error;
    double max_rel_error = 0;
    double tolerance = 0;
    double ms = 0;
    double tflops = 0;
    std::string detail;
};

// Each GPU's checks run in their own child process (self_exe __check-worker
// ...), all GPUs in parallel, each with the time limit.  A child that hangs
// is killed (SIGKILL) and its checks without a result reported "timeout"; one
// that crashes is reported "error" with the signal.  One outcome per
// requested check, in the order of `work`.  Never throws for GPU failures.
std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options);

// The child's entry: main() calls it with the arguments that follow
// "__check-worker".  Runs the checks through kernels::run_check and prints
// one result line per check on stdout (see worker_protocol.h).  Returns the
// child's exit status: 0 once every check has a result, 2 on bad arguments.
int check_worker_main(const std::vector<std::string>& args);

}  // namespace provision
