// The validate stage: runs the bundled GPU checks, one child process per GPU,
// all GPUs at once, each under a time limit, so that a hung or crashing GPU
// cannot take provision (or the container's start) down with it.  The
// workers are started as soon as the GPUs are known and open their GPUs
// while the rest of the run reads recipes, Python and packages; they get
// their checks once the selection is made (docs/DESIGN.md, "Validation").
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/states.h"

namespace provision {

struct ValidationOptions {
    ValidateMode mode = ValidateMode::quick; // quick or full (adds a throughput measurement)
    // Per GPU: what its worker may spend opening the GPU and running the
    // checks (time spent waiting for provision to send them is not counted).
    double timeout_s = 5.0;
    std::string self_exe = "/proc/self/exe"; // the binary whose "__check-worker" runs the checks
    std::string fault;                       // test-only, e.g. "attention.bf16=wrong-result", "*=hang", "*=crash", "*=killed"
    // Test-only (fault-injection builds): the worker opens its GPU through
    // the CUDA driver library alone (PROVISION_CUDA_LIBRARY: the fake one)
    // and acts the checks out instead of running kernels.
    bool simulate = false;
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

// Where one worker runs.
struct WorkerTarget {
    int gpu = 0;              // CUDA index as the workload sees it
    // CUDA_VISIBLE_DEVICES for the worker: this GPU alone, so its cuInit
    // meets no other GPU.  Empty: provision's own, the GPU found by `gpu`.
    std::string visible;
    std::string uuid;         // when known, the GPU the worker must have opened
};

// The workers of one run.  Each starts opening its GPU when it is started;
// run() hands out the checks and collects the results.  A worker that is
// not needed, or has not finished when this object goes, is killed; none is
// ever waited for after its results are in (the driver's teardown of its
// context goes on without provision).
class CheckWorkers {
public:
    explicit CheckWorkers(ValidationOptions options);
    ~CheckWorkers();
    CheckWorkers(const CheckWorkers&) = delete;
    CheckWorkers& operator=(const CheckWorkers&) = delete;

    // Starts a worker for every target that has none and stops those whose
    // GPU is not among the targets.  A target's uuid replaces what an
    // earlier call gave for the same GPU.
    void keep(const std::vector<WorkerTarget>& targets);
    void stop_all() { keep({}); }
    bool any() const;

    // Sends each GPU's worker its checks (a worker without checks is
    // stopped; a GPU without a worker gets one now) and waits for the
    // results.  One outcome per requested check, in the order of `work`.
    // Never throws for GPU failures.
    std::vector<CheckOutcome> run(const std::vector<GpuChecks>& work);

    // When the last worker that was given checks had opened its GPU;
    // nullopt when none had.
    std::optional<std::chrono::steady_clock::time_point> ready_at() const;

private:
    struct Worker;
    ValidationOptions options_;
    std::vector<std::unique_ptr<Worker>> workers_;
};

// The workers started and run in one go (tests, benchmarks).
std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options);

// The child's entry: main() calls it with the arguments that follow
// "__check-worker"; it reads the check names from stdin and prints its
// lines on stdout (see worker_protocol.h).  Returns the child's exit status:
// 0 once every check has a result, 2 on bad arguments.
int check_worker_main(const std::vector<std::string>& args);

}  // namespace provision
