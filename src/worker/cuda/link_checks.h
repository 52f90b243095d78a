// The links a GPU's data travels, measured in its validation worker: the
// host link (pinned host memory to the GPU and back), the peer link between
// two GPUs, and host memory as NCCL allocates it.
//
// The peer link is checked the way NCCL's ranks share memory between
// processes, on the path the workload's NCCL takes (PeerPath): the source's
// worker makes a buffer and exports it, the receiver's maps it (which
// needs peer access; a peer copy without it would be staged through host
// memory and prove nothing), pulls it with the copy engine, and checks every
// word on its own GPU against a pattern that depends on the source and the
// offset, so a stale, shifted, truncated or zeroed copy fails.
//
// Each measurement comes in two halves: the preparation (allocations,
// opening the peer's memory), which runs while the worker's kernels still
// run, and the measurement itself, once they are done.  Host code on the
// CUDA runtime (built where a toolkit is found); the kernels it launches
// are kernels/buffer_kernels.h's.  Plain C++ types in this header.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "gpu/copy_check.h"

namespace provision::links {

struct HostLinkMeasure {
    bool ok = false;
    double h2d_gb_per_s = 0;  // pinned host -> device, the median of the timed copies
    double d2h_gb_per_s = 0;  // device -> pinned host
    std::string detail;       // sizes and repeats, or the CUDA error
};

class HostLinkCheck {
public:
    virtual ~HostLinkCheck() = default;
    // Copies the buffer each way `repeats` times; the first copy of each
    // way is not timed.  Never throws.
    virtual HostLinkMeasure run(int repeats) = 0;
};
// A host link's host memory, allocated and filled without CUDA, so that it
// can be made while the GPU is still being opened: the first touch of its
// pages (most of what cudaMallocHost costs) is then off the start's critical
// path, and the link only pins them (8 MiB: 0.5-1.2 ms against 3.4-4.9,
// bench/results/check-time-2026-11-28.md).
class HostMemory {
public:
    explicit HostMemory(std::size_t bytes)
        : bytes_(bytes), data_(std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage)) {
        if (data_ == nullptr) throw std::bad_alloc();
        std::memset(data_, kFill, bytes_);
    }
    ~HostMemory() { std::free(data_); }
    HostMemory(const HostMemory&) = delete;
    HostMemory& operator=(const HostMemory&) = delete;
    void* get() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    static constexpr unsigned char kFill = 0x5A;  // what the copies carry

private:
    static constexpr std::size_t kPage = 4096;
    std::size_t bytes_;
    void* data_;
};

// Pins `memory` (or, where the driver cannot pin it, allocates pinned
// memory of its size) and allocates as much device memory on `cuda_device`
// (whose context is open).  Never throws: a failure is reported by run().
std::unique_ptr<HostLinkCheck> prepare_host_link(int cuda_device, std::unique_ptr<HostMemory> memory);

struct PeerExport {
    bool ok = false;
    std::string handle;  // legacy: the cudaIpcMemHandle_t in hex; cuMem: the socket it is served on
    std::string detail;  // the CUDA error (naming the call) when not ok
};

// Fills a buffer of `bytes` on `cuda_device` with the pattern of
// `source_id` (the GPU's index as the workload sees it) and exports it on
// `path`.  The buffer lives until release_peer_buffers(cuda_device).
// Never throws.
PeerExport export_peer_buffer(int cuda_device, int source_id, std::size_t bytes, PeerPath path);
// Frees what `cuda_device` exported and what its pulls kept for the next.
void release_peer_buffers(int cuda_device);

enum class PeerPullStatus {
    passed,
    wrong_bytes,
    no_peer_access,  // CUDA refuses peer access between the two GPUs
    path_failed,     // the memory could not be shared on this path (exported, sent, imported or mapped)
    error,           // anything else (the copy, the check)
};

struct PeerPull {
    PeerPullStatus status = PeerPullStatus::error;
    double gb_per_s = 0;      // source -> this GPU, the median of the timed copies
    std::string detail;       // the first wrong word, or the CUDA error
};

class PeerPullCheck {
public:
    virtual ~PeerPullCheck() = default;
    // Pulls the peer's buffer `repeats` times (the first not timed), checks
    // every word of the last copy, and unmaps it.  Never throws.
    virtual PeerPull run(int repeats) = 0;
};

struct PeerSource {
    PeerPath path = PeerPath::legacy_ipc;
    std::string handle;       // as its export_peer_buffer gave it
    int source_id = 0;        // whose pattern the buffer holds
    std::size_t bytes = 0;
};

// Maps the source's buffer on `cuda_device`: opens the legacy handle
// (which enables peer access), or asks the source's socket for the
// descriptor, imports and maps it.  A legacy handle this process exported
// (its GPUs in one worker) is read through peer access instead: CUDA opens
// no such handle in the process that made it.  `fault` (test-only): "wrong-bytes"
// changes a word of the copy before it is checked, "hang" spins on the GPU
// before the copy.  Never throws: a failure is reported by run().
std::unique_ptr<PeerPullCheck> prepare_pull(int cuda_device, const PeerSource& source, const std::string& fault = "");

struct HostMemoryCheck {
    bool ok = false;
    int numa_node = -1;   // the GPU's host NUMA node as the driver names it
    std::string detail;   // what was done, or which call failed and how
};

// One granule of host memory at the GPU's host NUMA node from cuMemCreate,
// mapped, written by the GPU and read back: NCCL's host buffers (>= 2.24).
// Never throws.
HostMemoryCheck check_host_numa_memory(int cuda_device);

struct FabricHandleLinkCheck {
    FabricHandleStatus status = FabricHandleStatus::failed;
    int cuda_error = 0;
    std::string detail;
};

// NCCL's multi-node NVLink check (cumem::check_fabric_handle) on the GPU,
// with a kernel writing a pattern through the imported mapping and another
// counting the words read back through the exporter's.  Never throws.
FabricHandleLinkCheck check_fabric_handle(int cuda_device);

}  // namespace provision::links
