// What the validation worker and its parent say to each other.
//
// Command line:  __check-worker --gpu N --mode quick|full [--seed S] [--fault SPEC] [--simulate]
// Input:         the names of the checks to run, one a line, ended by an
//                empty line.  The worker starts opening its GPU before they
//                arrive; end of input with no name means it is not needed.
// Output:        one line each, a TOML document of its own, flushed at once,
//                so the lines of a worker killed later survive, and a line
//                cut off by the kill is simply not one:
//                   ready = { at_ns = ..., open_ms = 231.5, uuid = "GPU-...", capability = "9.0" }
//                   result = { name = "gemm.tf32", status = "passed", max_rel_error = 0.00041, ... }
//                   done = { at_ns = ..., waited_ms = 0.4 }
//                `at_ns` is the monotonic clock (CLOCK_MONOTONIC, the same
//                for every process of the machine), so the parent learns
//                when a line was written, not when it got round to reading
//                it.  A worker that cannot open its GPU says so in `ready`
//                (`error = "..."`) and gives every check that error.
// Links:         after the names the parent may send commands, one a line;
//                the worker prepares each at once (allocations, opening a
//                peer's memory: beside its kernels), finishes each once its
//                checks are done (export and host-memory at once), answers
//                each with one line, and says `done` when its input ends:
//                   host-link BYTES REPEATS
//                      host_link = { ok = true, h2d_gb_per_s = 51.2, d2h_gb_per_s = 50.9,
//                                    generation = 5, width = 16, detail = "..." }
//                   export GPU BYTES PATH
//                      exported = { ok = true, path = "cumem-fd", handle = "...", detail = "..." }
//                   pull GPU BYTES REPEATS PATH HANDLE
//                      pulled = { from = GPU, path = "cumem-fd", status = "passed", gb_per_s = 371.2, detail = "..." }
//                   host-memory
//                      host_memory = { ok = true, numa_node = 0, detail = "..." }
//                   fabric-handle
//                      fabric_handle = { status = "passed", cuda_error = 0, detail = "..." }
//                   nccl-id LIBRARY
//                      nccl_id = { ok = true, id = "<ncclUniqueId in hex>", detail = "..." }
//                   nccl-all-reduce RANKS RANK BYTES REPEATS ID LIBRARY
//                      nccl = { ok = true, init_ms = 412.0, ms = 3.3, bus_gb_per_s = 322.1, detail = "...",
//                               transport = "P2P/CUMEM/read (48 connections)" }
//                (LIBRARY, the workload's libnccl.so.2, is the rest of the line)
//                GPU is the source's index as the workload sees it (the
//                pattern the buffer holds); PATH is legacy-ipc or cumem-fd
//                (gpu/copy_check.h); HANDLE the legacy handle in hex, or the
//                abstract UNIX socket the cuMem memory is served on; a
//                pulled status is passed, wrong-bytes, no-peer-access,
//                path-failed (the memory could not be shared on that path)
//                or error.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/states.h"
#include "gpu/copy_check.h"

namespace provision {

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
    double wall_ms = 0;  // the device half in the worker, upload to judgement (not in the report)
};

// One GPU of a worker: it opens CUDA device `cuda_device` (in the worker's
// own CUDA_VISIBLE_DEVICES), which the workload sees as `workload_gpu`.
struct WorkerGpu {
    int cuda_device = 0;
    int workload_gpu = 0;
};

// What every GPU of a worker runs with, besides its GPUs.
struct WorkerCommand {
    ValidateMode mode = ValidateMode::quick;
    // Test builds only (kernels/fault_injection.h): the faults to plant; the
    // GPU opened through `cuda_library` alone (the fake libcuda) and the
    // checks acted out; a file every line in and out is logged to, timed.
    std::string fault;
    bool simulate = false;
    std::string cuda_library = "libcuda.so.1";
    std::string timeline;
};

// The worker's command line, without the program path: `--gpu` (and `--as`)
// once per GPU.
std::vector<std::string> worker_arguments(const std::vector<WorkerGpu>& gpus, const WorkerCommand& command);

// A worker of several GPUs opens each from a thread of its own and tags
// every line, in and out, with the GPU's index as the workload sees it:
//     3:ready = { ... }
// and the parent ends one GPU's input with "3!" (the end of the whole
// input ends every GPU's).  A worker of one GPU tags nothing.
std::string tag_lines(int gpu, const std::string& text);
std::string format_end_of_input(int gpu);
// The whole lines of a worker's output tagged with `gpu`, untagged.
std::string lines_tagged(int gpu, const std::string& output);
struct TaggedInput {
    int gpu = 0;
    bool end = false;  // "N!": GPU N's input ends
    std::string text;
};
std::optional<TaggedInput> parse_tagged_input(const std::string& line);

// What the parent writes to a worker's input: the names and the end mark.
std::string format_check_list(const std::vector<std::string>& checks);

using MonotonicTime = std::chrono::steady_clock::time_point;

struct WorkerReady {
    MonotonicTime loaded;    // when the worker's program was loaded (its exec's cost shows between start and this)
    MonotonicTime at;
    double open_ms = 0;      // opening the GPU, from the worker's start
    std::string uuid;        // of the GPU it opened, when known
    std::string capability;  // "9.0"
    std::string error;       // why it could not open the GPU; empty when it did
    bool full = false;       // it could not because the GPU had no room for one more context
};

std::string format_ready_line(const WorkerReady& ready);
// waited_ms: how long the checks' device halves waited, once the GPU was
// open, for their host halves (inputs, references) to be ready.
std::string format_done_line(MonotonicTime at, double waited_ms = 0);

// One result line (no newline), and back.  Only `gpu` is not carried: the
// parent knows which worker printed the line.  A status a worker does not
// report (any but passed, failed, unsupported, error) is read as an error
// whose detail quotes it.
std::string format_result_line(const CheckOutcome& result);
std::optional<CheckOutcome> parse_result_line(const std::string& line);

struct HostLinkLine {
    bool ok = false;
    double h2d_gb_per_s = 0;
    double d2h_gb_per_s = 0;
    std::optional<PcieLink> link;  // the link's generation and width, read right after the copies
    std::string detail;
};

struct ExportedLine {
    bool ok = false;
    PeerPath path = PeerPath::legacy_ipc;
    std::string handle;
    std::string detail;
};

// One way of a peer copy, as the receiving worker saw it.
struct PulledLine {
    int from = -1;
    PeerPath path = PeerPath::legacy_ipc;
    PeerCopyStatus status = PeerCopyStatus::error;  // passed, wrong_bytes, error; skipped: no peer access
    bool no_peer_access = false;
    bool path_failed = false;  // the memory could not be shared on this path (status error)
    double gb_per_s = 0;
    std::string detail;
};

struct HostMemoryLine {
    bool ok = false;
    int numa_node = -1;
    std::string detail;
};

struct FabricHandleLine {
    FabricHandleStatus status = FabricHandleStatus::not_measured;
    int cuda_error = 0;
    std::string detail;
};

struct NcclIdLine {
    bool ok = false;
    std::string id;
    std::string detail;
};

struct NcclLine {
    bool ok = false;
    double init_ms = 0;
    double ms = 0;
    double bus_gb_per_s = 0;
    std::string detail{};
    std::string transport{};  // what NCCL's own log says each channel took (worker/nccl_log.h)
};

std::string format_host_link_command(std::size_t bytes, int repeats);
std::string format_export_command(int gpu, std::size_t bytes, PeerPath path);
std::string format_pull_command(int gpu, std::size_t bytes, int repeats, PeerPath path, const std::string& handle);
std::string format_host_memory_command();
std::string format_fabric_handle_command();
std::string format_nccl_id_command(const std::string& library);
std::string format_nccl_all_reduce_command(int ranks, int rank, std::size_t bytes, int repeats, const std::string& id,
                                           const std::string& library);
std::string format_nccl_id_line(const NcclIdLine& line);
std::string format_nccl_line(const NcclLine& line);
std::string format_host_link_line(const HostLinkLine& line);
std::string format_exported_line(const ExportedLine& line);
std::string format_pulled_line(const PulledLine& line);
std::string format_host_memory_line(const HostMemoryLine& line);
std::string format_fabric_handle_line(const FabricHandleLine& line);

// A command line, read back by the worker.
struct LinkCommand {
    enum class Kind { host_link, export_buffer, pull, host_memory, fabric_handle, nccl_id, nccl_all_reduce } kind =
        Kind::host_link;
    int gpu = 0;                 // a pull's source; an all-reduce's rank
    int ranks = 0;
    std::size_t bytes = 0;
    int repeats = 1;
    PeerPath path = PeerPath::legacy_ipc;
    std::string handle;          // a pull's; an all-reduce's communicator id
    std::string library;         // the NCCL commands'
};
std::optional<LinkCommand> parse_link_command(const std::string& line);

// Everything a worker has printed so far, read line by line as it arrives.
struct WorkerOutput {
    std::optional<WorkerReady> ready;
    std::map<std::string, CheckOutcome> results;  // by check name
    std::optional<HostLinkLine> host_link;
    std::map<PeerPath, ExportedLine> exported;    // by path
    std::map<std::pair<int, PeerPath>, PulledLine> pulled;  // by the source GPU and the path
    std::optional<HostMemoryLine> host_memory;
    std::optional<FabricHandleLine> fabric_handle;
    std::optional<NcclIdLine> nccl_id;
    std::optional<NcclLine> nccl;
    std::optional<MonotonicTime> done;
    std::string unparsed;                         // the first line that was none of these, if any
};
// Whole lines only: a last line without its newline waits for the rest.
WorkerOutput parse_worker_output(const std::string& text);

// The fault a check runs with under a test-only fault spec: comma-separated
// PATTERN=FAULT entries, PATTERN a check name or "*"; the first match wins.
// "" when none matches.
std::string fault_for_check(const std::string& spec, const std::string& check);

// Worker output in a detail: in single quotes, cut after 200 characters.
std::string quoted(std::string text);

}  // namespace provision
