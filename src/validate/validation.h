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
#include "gpu/copy_check.h"

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

// What the workers measure of the links after their checks (the pod stage
// judges it): each GPU's host link (pinned copies each way, and the PCIe
// link read while busy), and for each pair a buffer copied each way between
// the two GPUs' workers through CUDA IPC, in rounds (link_rounds.h).
struct LinkWork {
    bool host_links = false;
    std::vector<std::pair<int, int>> peer_pairs;  // CUDA indices
    std::size_t host_bytes = std::size_t{32} << 20;
    std::size_t peer_bytes = std::size_t{64} << 20;
    int repeats = 3;  // timed copies of each, after an untimed one
};

struct ValidationRun {
    std::vector<CheckOutcome> checks;  // one per requested check, in the order of the work
    std::vector<HostCopyResult> host_copies;
    std::vector<PeerCopyResult> peer_copies;  // one per pair asked for
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
    // results, then measures the links `links` asks for among the GPUs
    // whose workers run.  Never throws for GPU failures.
    ValidationRun run(const std::vector<GpuChecks>& work, const LinkWork& links = {});

    // When the last worker that was given checks had opened its GPU;
    // nullopt when none had.
    std::optional<std::chrono::steady_clock::time_point> ready_at() const;

private:
    struct Worker;
    Worker* worker_of(int gpu) const;
    // Waits until each worker of `waiting` is `complete`, has ended, or is
    // past its deadline (then killed), reading its output as it comes.
    template <typename Complete>
    void wait_for(const std::vector<Worker*>& waiting, Complete complete);
    void copy_between_peers(const LinkWork& links, ValidationRun& run);

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
