// What a validation worker does with its GPU, behind one interface: the
// kernels and the CUDA runtime on a real GPU (cuda_backend.cpp), or, in
// test builds, the same acted out through the CUDA driver library alone
// (simulated/: the fake libcuda of tests/fake_nvml), so that every path of
// the worker and its parent runs in CI, where no GPU is.  The worker's loop
// (worker_main.cpp) and its link thread (worker_links.h) never ask which.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/validation_kernels.h"
#include "worker_protocol/worker_protocol.h"

namespace provision {

// A link measurement between its two halves: prepared when its command
// arrives (allocations, a peer's memory opened: beside the checks),
// finished once the checks are done (the copies, timed on a GPU nothing
// else uses).
class PreparedLink {
public:
    virtual ~PreparedLink() = default;
    // Its answer line (worker_protocol.h).  Called once; never throws.
    virtual std::string finish() = 0;
};

// A measurement whose answer is known when it is prepared (a GPU that could
// not be opened, a build without the link checks).
class AnsweredLink final : public PreparedLink {
public:
    explicit AnsweredLink(std::string line) : line_(std::move(line)) {}
    std::string finish() override { return line_; }

private:
    std::string line_;
};

// One GPU of a worker.  `fault` is the fault a test planted for the command
// (kernels/fault_injection.h; empty in release builds).  Never throws.
class GpuBackend {
public:
    virtual ~GpuBackend() = default;

    // cuInit, the device, its primary context, current on this thread.
    virtual kernels::OpenedDevice open() = 0;

    // A check's host half: it may run on any thread, before open() returns;
    // its run() is the device half, after it.
    virtual std::unique_ptr<kernels::PreparedCheck> prepare_check(const std::string& name,
                                                                  const kernels::CheckOptions& options) = 0;

    // A host link's host half: its host memory, made before open() returns
    // (no CUDA call, any thread), for the next prepare_host_link of `bytes`.
    virtual void stage_host_link(std::size_t bytes) = 0;

    // The link commands of worker_protocol.h, on the opened GPU: those
    // answered at once...
    virtual ExportedLine export_buffer(const LinkCommand& command) = 0;
    virtual HostMemoryLine host_memory() = 0;
    virtual FabricHandleLine fabric_handle() = 0;
    virtual NcclIdLine nccl_id(const LinkCommand& command) = 0;
    // ...and those measured once the checks are done.
    virtual std::unique_ptr<PreparedLink> prepare_host_link(const LinkCommand& command, const std::string& fault) = 0;
    virtual std::unique_ptr<PreparedLink> prepare_pull(const LinkCommand& command, const std::string& fault) = 0;
    virtual std::unique_ptr<PreparedLink> prepare_all_reduce(const LinkCommand& command, const std::string& fault) = 0;

    // Frees what the links kept for this GPU (its exports, its pulls'
    // buffers), once it has said `done`.
    virtual void release() = 0;
};

// The backend of CUDA device `cuda_device` (in the worker's own
// CUDA_VISIBLE_DEVICES): the kernels', or with `simulate` (test builds
// alone) the acted-out one through `cuda_library`.
std::unique_ptr<GpuBackend> make_gpu_backend(int cuda_device, bool simulate, const std::string& cuda_library);

// The two, for make_gpu_backend: the simulated one is defined in
// fault-injection builds alone (simulated/), so a release binary holds none
// of it.
std::unique_ptr<GpuBackend> make_cuda_backend(int cuda_device);
std::unique_ptr<GpuBackend> make_simulated_backend(int cuda_device, const std::string& cuda_library);

}  // namespace provision
