// What the copy check measured: for each pair of GPUs that claims peer
// access, a buffer copied each way with peer access enabled and every byte
// verified on the receiving GPU; for each GPU, pinned host->device and
// device->host copies.  The validation worker fills these plain values; the
// pod stage (pod.h) judges them.  Where no check ran, CopyChecks says why and
// the recipes' known-broken table stands in for the peer copies.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_links.h"

namespace provision {

enum class PeerCopyStatus {
    passed,       // both ways, every byte as sent
    wrong_bytes,  // a copy delivered other bytes (stale, shifted, truncated, zeroed)
    timeout,      // a copy did not finish within the watchdog's limit (hung)
    error,        // CUDA refused (peer access could not be enabled, a copy failed, ...)
    skipped,      // not run (a simulated machine, a pair without peer access)
    // Not measured: a GPU of the pair could not be opened, or its worker had
    // stopped before the copy; it proves nothing of the link either way.
    not_measured,
};

// "passed", "wrong-bytes", "timeout", "error", "skipped", "not-measured".
std::string_view to_string(PeerCopyStatus status);

// How a pair's buffer was shared between the two workers: the way the
// workload's NCCL shares its peer buffers between ranks.
enum class PeerPath {
    legacy_ipc,  // cudaIpc* handles: NCCL before 2.19, or NCCL_CUMEM_ENABLE=0 ("P2P/IPC" in its log)
    cumem_fd,    // cuMem memory and a file descriptor over a UNIX socket: NCCL 2.19 and newer ("P2P/CUMEM")
};
// "legacy-ipc", "cumem-fd".
std::string_view to_string(PeerPath path);
std::optional<PeerPath> parse_peer_path(std::string_view text);

struct PeerCopyResult {
    int first = 0;   // CUDA indices, first < second (GpuPair's)
    int second = 0;
    PeerCopyStatus status = PeerCopyStatus::skipped;
    double gb_per_s_forward = 0;   // first -> second; 0 where not measured
    double gb_per_s_backward = 0;  // second -> first
    std::string detail{};          // "offset 4096: 0x00 where 0x5a was sent", "simulated", ...
    // cuDeviceCanAccessPeer both ways, where the worker asked: false makes
    // the pair p2p_unavailable whatever NVML says (status skipped, no copy).
    std::optional<bool> cuda_peer_access{};
    PeerPath path = PeerPath::legacy_ipc;  // the path this result was checked on
    // Where the path asked for first could not share the memory (exported,
    // sent, imported or mapped) and another was checked after it: that
    // first path, and why.
    std::optional<PeerPath> failed_path{};
    std::string failed_path_detail{};
};

// NCCL's host buffers (>= 2.24 by default): one granule of host memory at
// the GPU's host NUMA node from cuMemCreate, mapped and written by the GPU.
struct HostMemoryResult {
    int gpu = 0;                   // CUDA index
    bool ok = false;
    int numa_node = -1;            // as the driver names it for the GPU; -1: none
    std::string detail{};          // which call failed and how, when not ok; why not measured
    bool measured = true;          // false: the GPU could not be opened; `ok` says nothing
};

// NCCL's multi-node NVLink check on one GPU (its mnnvl.cc), made in the
// GPU's worker: memory with a fabric handle, exported, imported and mapped,
// a pattern written through the import and read back.
enum class FabricHandleStatus {
    passed,
    failed,        // a step failed: NCCL would stop the job at init
    unsupported,   // HANDLE_TYPE_FABRIC_SUPPORTED 0: NCCL takes no MNNVL
    not_measured,  // the GPU could not be opened, or its worker had stopped
};
std::string_view to_string(FabricHandleStatus status);  // "passed", "failed", "unsupported", "not-measured"
std::optional<FabricHandleStatus> parse_fabric_handle_status(std::string_view text);

struct FabricHandleCheck {
    int gpu = 0;                   // CUDA index
    FabricHandleStatus status = FabricHandleStatus::not_measured;
    int cuda_error = 0;            // CUDA's error of the failed call (800: no IMEX channel; 400: invalid handle)
    std::string detail{};          // the call and CUDA's words, or what was done
};

struct HostCopyResult {
    int gpu = 0;                   // CUDA index
    double h2d_gb_per_s = 0;       // pinned host -> device; 0 where not measured
    double d2h_gb_per_s = 0;       // device -> pinned host
    // NVML's PCIe reading taken right after the copies: an idle link trains
    // down to a lower generation to save power, so only a busy reading says
    // what the link can do.
    std::optional<PcieLink> link_while_busy;
};

// --validate=full: an all-reduce across the workers with the workload's NCCL.
struct NcclAllReduceResult {
    PeerCopyStatus status = PeerCopyStatus::skipped;  // passed, wrong_bytes (a wrong sum), timeout, error
    int ranks = 0;
    double init_ms = 0;        // the slowest rank's ncclCommInitRank
    double ms = 0;             // the slowest rank's median all-reduce
    double bus_gb_per_s = 0;   // from that time
    std::string detail{};
    int nodes = 1;             // the nodes whose ranks joined (a job over several nodes)
    std::string transport{};   // what NCCL's log says its channels took ("NET/Socket/0 (2 connections) over ...")
};

enum class CopyCheckRun {
    ran,        // the worker ran it: `pairs` and `hosts` hold what it measured
    simulated,  // a simulated machine: every pair is reported skipped (simulated)
    not_run,    // --no-validate, a build without kernels, ...: `reason` says which
};

struct CopyChecks {
    CopyCheckRun run = CopyCheckRun::not_run;
    std::string reason;
    std::vector<PeerCopyResult> pairs;  // one per pair checked, in any order
    std::vector<HostCopyResult> hosts;  // one per GPU measured
    std::vector<HostMemoryResult> host_memory;  // one per GPU checked (where the workload's NCCL uses it)
    std::vector<FabricHandleCheck> fabric_handles;  // one per GPU checked (where NCCL would check MNNVL)
    std::optional<NcclAllReduceResult> nccl_all_reduce;  // --validate=full, with an NCCL and two GPUs or more
    // Each GPU's link error counters read again once the copies were done
    // (by GPU index; empty where not read), and how long the copies took:
    // against the counts at start (GpuHealth::link_errors), what rose during them.
    std::vector<std::optional<LinkErrorCounts>> link_errors_after;
    double copies_seconds = 0;

    const PeerCopyResult* pair(int first, int second) const;
    const HostCopyResult* host(int gpu) const;
};

}  // namespace provision
