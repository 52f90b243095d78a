// The validate stage: runs the bundled GPU checks in child processes (two,
// each opening half the GPUs from a thread per GPU), all GPUs at once, each
// under a time limit, so that a hung or crashing GPU cannot take provision
// (or the container's start) down with it.  The
// workers are started as soon as the GPUs are known and open their GPUs
// while the rest of the run reads recipes, Python and packages; they get
// their checks once the selection is made (docs/DESIGN.md, "Validation").
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/states.h"
#include "gpu/copy_check.h"
#include "validate/link_rounds.h"
#include "worker_protocol/worker_protocol.h"

namespace provision {

struct ValidationOptions {
    ValidateMode mode = ValidateMode::quick; // quick or full (adds a throughput measurement)
    // Per GPU: what its worker may spend on each piece of work it is given
    // (the checks, a round of copies, ...), counted from when the work was
    // given, or from the GPU's opening when it was given before
    // (--validate-timeout).  Time spent waiting for provision is not counted.
    double timeout_s = 5.0;
    // Per GPU: what its worker may spend opening the GPU (cuInit and its
    // context), from the worker's start: the driver's side of detection, so
    // PROVISION_DETECT_TIMEOUT.
    double open_timeout_s = 20.0;
    std::string self_exe = "/proc/self/exe"; // the binary whose "__check-worker" runs the checks
    std::string fault;                       // test-only, e.g. "attention.bf16=wrong-result", "*=hang", "*=crash", "*=killed"
    // Test-only (fault-injection builds): the worker opens its GPU through
    // the CUDA driver library alone (`cuda_library`: the fake one) and acts
    // the checks out instead of running kernels.
    bool simulate = false;
    std::string cuda_library = "libcuda.so.1";
    // Test-only (fault-injection builds): a file each worker appends every
    // line it reads and writes to, with the monotonic time (bench/pod/pod_timeline.py).
    std::string timeline;
    // How many processes the GPUs' workers are split into, each opening its
    // GPUs from a thread each (at most one process per GPU).  Two: on 4 x
    // H100 two processes of two GPUs cost what one process does, and a
    // process per GPU 14% more (docs/DESIGN.md, "Validation"); two keep a
    // process between the halves for the pairs NCCL's ranks share memory
    // across.
    int worker_processes = 2;
};

struct GpuChecks {
    int gpu;                                 // CUDA index as the workload sees it
    std::vector<std::string> checks;
};

// This node's place in a job across nodes: NCCL's id, the ranks in all,
// this node's first rank, and the nodes whose ranks take part.
struct JobRanks {
    std::string id{};
    int ranks = 0;
    int first_rank = 0;
    int nodes = 1;
};
using MakeNcclId = std::function<std::optional<std::string>(std::string& why)>;

// A job over several nodes: how this node's ranks join the job's one
// communicator, and how the job's outcome comes back (app/network_step.h
// makes one from network/rendezvous.h).
class NodeMeeting {
public:
    virtual ~NodeMeeting() = default;
    // Given this node's ranks (0: none to offer, and `why`) and a maker of
    // NCCL's id (called on node 0 alone, once enough nodes have come): the
    // id, the ranks in all and this node's first rank; or nullopt with why,
    // and then no rank of this node joins (the all-reduce is not measured).
    virtual std::optional<JobRanks> meet(int local_ranks, const MakeNcclId& make_id, std::string& why) = 0;
    // How long NCCL's communicator across the job and its all-reduce may
    // take: a limit of their own, never the per-check one.
    virtual std::chrono::milliseconds proof_limit(int ranks, std::size_t bytes, int repeats) const = 0;
    // Without waiting: why the job's proof can no longer end well (a node
    // vanished or failed), once it is known; nullopt until then.
    virtual std::optional<std::string> lost() = 0;
    // This node's ranks' outcome, told to the job; where the job's outcome
    // puts the blame elsewhere, `own` becomes not measured, saying why.
    virtual void settle(NcclAllReduceResult& own) = 0;
};

// What the workers measure of the links after their checks (the pod stage
// judges it): each GPU's host link (pinned copies each way, and the PCIe
// link read while busy), and for each pair a buffer copied each way between
// the two GPUs' workers on the path the workload's NCCL shares memory on,
// in rounds (link_rounds.h); where that path is cuMem and it fails, the
// pair again through legacy IPC (NCCL_CUMEM_ENABLE=0 would make NCCL take
// it); and, where the workload's NCCL takes its host buffers from cuMem,
// host memory on each GPU's NUMA node.
struct LinkWork {
    bool host_links = false;
    std::vector<std::pair<int, int>> peer_pairs;  // CUDA indices
    PeerPath peer_path = PeerPath::legacy_ipc;
    bool host_memory = false;
    // NCCL's multi-node NVLink check on each GPU (fabric/: where the fabric
    // is MNNVL and NCCL would make it).
    bool fabric_handles = false;
    // --validate=full: the workload's libnccl.so.2 for an all-reduce across
    // the workers (empty: none).
    std::string nccl_library;
    std::size_t nccl_bytes = std::size_t{1} << 30;
    int nccl_repeats = 5;
    NodeMeeting* nodes = nullptr;  // none: this node's ranks alone
    // 8 MiB copies reach 95-98% of 32 MiB's rate on an H100 (51.6-52.9 against
    // 54.1 GB/s; 4 MiB: 40.9 host to device), and pinning them beside the
    // quick checks takes about 10 ms less of a GPU's start than 32 MiB
    // (bench/results/start-breakdown-2026-11-26).  The judgement's bound is
    // half the link's figure (recipes/pod.toml).
    std::size_t host_bytes = std::size_t{8} << 20;
    std::size_t peer_bytes = std::size_t{64} << 20;
    int repeats = 3;  // timed copies of each, after an untimed one
};

struct ValidationRun {
    std::vector<CheckOutcome> checks;  // one per requested check, in the order of the work
    std::vector<HostCopyResult> host_copies;
    std::vector<PeerCopyResult> peer_copies;  // one per pair asked for
    std::vector<HostMemoryResult> host_memory;  // one per GPU asked
    std::vector<FabricHandleCheck> fabric_handles;  // one per GPU asked
    std::optional<NcclAllReduceResult> nccl_all_reduce;
    std::vector<int> full_gpus;  // GPUs whose worker found no room for a context (out of memory, exclusive)
};

// The two limits a GPU's worker runs under (ValidationOptions).
struct WorkerLimits {
    double open_s = 20.0;
    double work_s = 5.0;
};

// Where one GPU's worker runs.
struct WorkerTarget {
    int gpu = 0;              // CUDA index as the workload sees it
    // The CUDA_VISIBLE_DEVICES entry of this GPU: its process sees its own
    // GPUs alone, so its cuInit meets no other.  Empty: provision's own,
    // the GPU found by `gpu`.
    std::string visible;
    std::string uuid;         // when known, the GPU the worker must have opened
};

// The processes `targets` are started in: at most `processes` of them, each
// a run of consecutive targets (so that an entry CUDA cannot open hides, in
// its process, only GPUs it hides from the workload too), as even as can
// be, the larger first.
std::vector<std::vector<WorkerTarget>> worker_processes_for(const std::vector<WorkerTarget>& targets, int processes);

struct PairOutcome;  // worker_outcome.h
struct PulledWay;

// The workers of one run, a GPU's each, in worker_processes_for's processes.
// Each starts opening its GPU when it is started;
// run() hands out the checks, collects the results and returns once every
// worker has said `done` (or was killed at its limit); each is let go at
// that line, and the driver's teardown of its context goes on without
// provision.  A worker that is not needed is killed.
class WorkerPool {
public:
    explicit WorkerPool(ValidationOptions options);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

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

    // Each worker given checks: when it started, opened its GPU, said done.
    struct Times {
        int gpu = 0;
        std::chrono::steady_clock::time_point started;
        std::optional<std::chrono::steady_clock::time_point> running;  // its program loaded and running
        std::optional<std::chrono::steady_clock::time_point> ready;
        std::optional<std::chrono::steady_clock::time_point> done;
    };
    std::vector<Times> times() const;

private:
    struct Process;
    struct Worker;
    Worker* worker_of(int gpu) const;
    // At `done`: the worker has ended; its process is let go once every GPU
    // of it has.
    void let_go(Worker& done);
    // Past its limit: its process is killed, with the GPUs it shares it with.
    void kill_at_limit(Worker& late);
    // Waits until each worker of `waiting` is `complete`, has ended, or is
    // past its deadline (then killed), reading its output as it comes.
    template <typename Complete>
    void wait_for(const std::vector<Worker*>& waiting, Complete complete);
    // The pulls of one round, both ways of each pair whose workers can take
    // them; a pair that cannot be sent is `record`ed at once.  Returns the
    // pairs sent.
    std::vector<GpuIndexPair> send_round(const std::vector<GpuIndexPair>& round, PeerPath path, const LinkWork& links,
                                         const std::function<void(PairOutcome)>& record);
    // The way `source` -> `receiver` of a pair, as the receiver's worker ended it.
    PulledWay pulled_way(int receiver, int source, PeerPath path) const;
    // The pairs of `pairs` on `path`, round after round: sent, waited for,
    // judged (worker_outcome.h).  The first round's commands go out at once
    // (its workers may still be running their checks, which `checked` waits
    // for too).  Pairs whose memory could not be shared on `path` are
    // returned, the others' results added to `run`.
    template <typename Checked>
    std::vector<GpuIndexPair> copy_between_peers(const std::vector<GpuIndexPair>& pairs, PeerPath path,
                                                 const LinkWork& links, const std::vector<Worker*>& started,
                                                 Checked checked, ValidationRun& run);
    // Sends `export` on `path` to each worker of `pairs` that has not
    // exported on it, and waits for the answers.
    void export_on(PeerPath path, const std::vector<GpuIndexPair>& pairs, const LinkWork& links);
    // Ends the run: closes every worker's input and waits for its `done`.
    void let_go_at_done();
    // The all-reduce across the workers that still run (two or more).
    std::optional<NcclAllReduceResult> all_reduce(const LinkWork& links);

    WorkerLimits limits() const { return {options_.open_timeout_s, options_.timeout_s}; }

    ValidationOptions options_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::map<GpuIndexPair, PeerCopyResult> failed_results_;  // pairs whose path failed, until retried
};

// The workers started and run in one go (tests, benchmarks).
std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options);

}  // namespace provision
