// The links a GPU's data travels, measured in its validation worker: the
// host link (pinned host memory to the GPU and back) and the peer link
// between two GPUs, checked as NCCL uses it between processes: the source's
// worker exports a buffer through CUDA IPC, the receiver's maps it (which
// enables peer access; a peer copy without it would be staged through host
// memory and prove nothing), pulls it with the copy engine, and checks
// every word on its own GPU against a pattern that depends on the source
// and the offset, so a stale, shifted, truncated or zeroed copy fails.
// Plain C++ types only.
#pragma once

#include <cstddef>
#include <string>

namespace provision::kernels {

struct HostLinkMeasure {
    bool ok = false;
    double h2d_gb_per_s = 0;  // pinned host -> device, the median of the timed copies
    double d2h_gb_per_s = 0;  // device -> pinned host
    std::string detail;       // sizes and repeats, or the CUDA error
};

// Copies `bytes` each way `repeats` times on `cuda_device` (whose context
// is open); the first copy of each way is not timed.  Never throws.
HostLinkMeasure measure_host_link(int cuda_device, std::size_t bytes, int repeats);

struct PeerExport {
    bool ok = false;
    std::string handle;  // the cudaIpcMemHandle_t, in hex: what the receiver opens
    std::string detail;  // the CUDA error when not ok
};

// Fills a buffer of `bytes` on `cuda_device` with the pattern of
// `source_id` (the GPU's index as the workload sees it) and exports it.
// The buffer lives until release_peer_exports().  Never throws.
PeerExport export_peer_buffer(int cuda_device, int source_id, std::size_t bytes);
void release_peer_exports();

enum class PeerPullStatus {
    passed,
    wrong_bytes,
    no_peer_access,  // CUDA cannot enable peer access between the two GPUs
    error,
};

struct PeerPull {
    PeerPullStatus status = PeerPullStatus::error;
    double gb_per_s = 0;      // source -> this GPU, the median of the timed copies
    std::string detail;       // the first wrong word, or the CUDA error
};

// Maps the source's exported buffer on `cuda_device`, pulls it `repeats`
// times (the first not timed), checks every word of the last copy against
// `source_id`'s pattern, and unmaps it (so no GPU keeps more than a few
// peer mappings at once).  `fault` (test-only): "wrong-bytes" changes a word
// of the copy before it is checked, "hang" spins on the GPU before the copy.
// Never throws.
PeerPull pull_peer_buffer(int cuda_device, const std::string& handle, int source_id, std::size_t bytes, int repeats,
                          const std::string& fault = "");

}  // namespace provision::kernels
