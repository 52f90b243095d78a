#include "worker/cuda/link_checks.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/buffer_kernels.h"
#include "kernels/cuda_support.h"
#include "kernels/fault_injection.h"
#include "kernels/kernel_launchers.h"
#include "worker/cumem_sharing.h"

namespace provision::links {
namespace {

using kernels::detail::check_cuda;
using kernels::detail::CudaFailure;
namespace detail = kernels::detail;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

double gb_per_s(std::size_t bytes, double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0; }

// Times `copy` on `stream` `repeats` times after one untimed run.
template <typename Copy>
double median_ms(const detail::Stream& stream, int repeats, Copy copy) {
    copy();
    std::vector<double> times;
    detail::EventTimer timer;
    for (int i = 0; i < std::max(repeats, 1); ++i) {
        timer.start(stream.get());
        copy();
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    return median(times);
}

class PinnedBuffer {
public:
    explicit PinnedBuffer(std::size_t bytes) { check_cuda(cudaMallocHost(&data_, bytes), "cudaMallocHost"); }
    ~PinnedBuffer() { cudaFreeHost(data_); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void* get() const { return data_; }

private:
    void* data_ = nullptr;
};

std::string to_hex(const void* data, std::size_t size) {
    std::string text;
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) text += fmt::format("{:02x}", bytes[i]);
    return text;
}

bool from_hex(const std::string& text, void* data, std::size_t size) {
    if (text.size() != 2 * size) return false;
    auto* bytes = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        unsigned value = 0;
        for (int half = 0; half < 2; ++half) {
            const char c = text[2 * i + half];
            const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (digit < 0) return false;
            value = value * 16 + static_cast<unsigned>(digit);
        }
        bytes[i] = static_cast<unsigned char>(value);
    }
    return true;
}

// The driver's cuMem entry points, looked up through the runtime so that
// nothing links libcuda itself.
const cumem::Driver& runtime_driver() {
    static const cumem::Driver driver = [] {
        cumem::Driver d;
        const auto find = [](auto& function, const char* name) {
            void* address = nullptr;
            cudaDriverEntryPointQueryResult found{};
            if (cudaGetDriverEntryPointByVersion(name, &address, 12000, cudaEnableDefault, &found) == cudaSuccess &&
                found == cudaDriverEntryPointSuccess)
                function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
        };
        find(d.device_get, "cuDeviceGet");
        find(d.device_attribute, "cuDeviceGetAttribute");
        find(d.granularity, "cuMemGetAllocationGranularity");
        find(d.create, "cuMemCreate");
        find(d.release, "cuMemRelease");
        find(d.address_reserve, "cuMemAddressReserve");
        find(d.address_free, "cuMemAddressFree");
        find(d.map, "cuMemMap");
        find(d.unmap, "cuMemUnmap");
        find(d.set_access, "cuMemSetAccess");
        find(d.export_handle, "cuMemExportToShareableHandle");
        find(d.import_handle, "cuMemImportFromShareableHandle");
        find(d.error_name, "cuGetErrorName");
        return d;
    }();
    return driver;
}

// What this process exports, kept until release_peer_buffers(): a worker
// of several GPUs exports from each GPU's thread, and its GPUs pull from
// each other.
struct ExportedBuffer {
    int device = 0;
    std::string handle;                           // as export_peer_buffer gave it
    void* legacy = nullptr;                       // the cudaMalloc'd buffer of a legacy handle
    std::unique_ptr<cumem::SharedBuffer> shared;  // or the cuMem one
};
struct ExportedBuffers {
    std::mutex mutex;
    std::vector<ExportedBuffer> buffers;
};
ExportedBuffers& exported_buffers() {
    static ExportedBuffers exported;
    return exported;
}

void keep_exported(ExportedBuffer buffer) {
    ExportedBuffers& exported = exported_buffers();
    std::lock_guard lock(exported.mutex);
    exported.buffers.push_back(std::move(buffer));
}

// A buffer another of this process's GPUs exported, as its pulls within
// the process read it: CUDA refuses to open a legacy handle in the process
// that made it (cudaErrorInvalidContext), and NCCL maps the cuMem memory of
// a rank in its own process without importing it.
struct OwnExport {
    int device = 0;
    void* legacy = nullptr;      // the cudaMalloc'd buffer, or
    cumem::Handle handle = 0;    // the cuMem allocation
    std::size_t bytes = 0;
};
std::optional<OwnExport> exported_here(const std::string& handle) {
    ExportedBuffers& exported = exported_buffers();
    std::lock_guard lock(exported.mutex);
    for (const ExportedBuffer& buffer : exported.buffers)
        if (buffer.handle == handle)
            return buffer.shared ? OwnExport{buffer.device, nullptr, buffer.shared->handle(), buffer.shared->size()}
                                 : OwnExport{buffer.device, buffer.legacy, 0, 0};
    return std::nullopt;
}

// What a GPU's pulls copy into and check with: the local buffer, the
// counters of the check and a stream.  A GPU's first pull makes them and
// its later ones (a pod's later rounds) take them over, since freeing device
// memory waits for the whole device; release_peer_buffers() frees them.
struct PullScratch {
    int device = 0;
    std::size_t bytes = 0;
    std::unique_ptr<detail::Stream> stream;
    std::unique_ptr<detail::DeviceBuffer> local;
    std::unique_ptr<detail::DeviceBuffer> counters;
};
struct SpareScratch {
    std::mutex mutex;
    std::vector<std::unique_ptr<PullScratch>> spare;
};
SpareScratch& spare_scratch() {
    static SpareScratch scratch;
    return scratch;
}

// A spare one of `device` for `bytes`, or a new one (the device current).
// Throws CudaFailure.
std::unique_ptr<PullScratch> take_scratch(int device, std::size_t bytes) {
    {
        SpareScratch& scratch = spare_scratch();
        std::lock_guard lock(scratch.mutex);
        auto& spare = scratch.spare;
        const auto found = std::find_if(spare.begin(), spare.end(), [&](const auto& one) {
            return one->device == device && one->bytes == bytes;
        });
        if (found != spare.end()) {
            auto taken = std::move(*found);
            spare.erase(found);
            return taken;
        }
    }
    auto made = std::make_unique<PullScratch>();
    made->device = device;
    made->bytes = bytes;
    made->stream = std::make_unique<detail::Stream>();
    made->local = std::make_unique<detail::DeviceBuffer>(bytes);
    made->counters = std::make_unique<detail::DeviceBuffer>(2 * sizeof(unsigned long long));
    return made;
}

void give_back(std::unique_ptr<PullScratch> scratch) {
    if (!scratch) return;
    SpareScratch& spare = spare_scratch();
    std::lock_guard lock(spare.mutex);
    spare.spare.push_back(std::move(scratch));
}

// Host memory made without CUDA, pinned while this lives.
class RegisteredMemory {
public:
    explicit RegisteredMemory(std::unique_ptr<HostMemory> memory) : memory_(std::move(memory)) {
        check_cuda(cudaHostRegister(memory_->get(), memory_->bytes(), cudaHostRegisterDefault), "cudaHostRegister");
    }
    ~RegisteredMemory() { cudaHostUnregister(memory_->get()); }
    RegisteredMemory(const RegisteredMemory&) = delete;
    RegisteredMemory& operator=(const RegisteredMemory&) = delete;
    void* get() const { return memory_->get(); }

private:
    std::unique_ptr<HostMemory> memory_;
};

class PreparedHostLink final : public HostLinkCheck {
public:
    PreparedHostLink(int cuda_device, std::unique_ptr<HostMemory> memory)
        : device_(cuda_device), bytes_(memory->bytes()) {
        try {
            check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
            pin(std::move(memory));
            device_buffer_ = std::make_unique<detail::DeviceBuffer>(bytes_);
        } catch (const CudaFailure& failure) {
            error_ = detail::describe_cuda_failure(failure, cuda_device);
        }
    }

    HostLinkMeasure run(int repeats) override {
        HostLinkMeasure measure;
        if (!error_.empty()) {
            measure.detail = error_;
            return measure;
        }
        try {
            check_cuda(cudaSetDevice(device_), "cudaSetDevice");
            detail::Stream stream;
            const double h2d = median_ms(stream, repeats, [&] {
                check_cuda(cudaMemcpyAsync(device_buffer_->get(), host_data_, bytes_, cudaMemcpyHostToDevice,
                                           stream.get()),
                           "cudaMemcpyAsync (host to device)");
            });
            const double d2h = median_ms(stream, repeats, [&] {
                check_cuda(cudaMemcpyAsync(host_data_, device_buffer_->get(), bytes_, cudaMemcpyDeviceToHost,
                                           stream.get()),
                           "cudaMemcpyAsync (device to host)");
            });
            stream.synchronize("host link copies");
            measure.h2d_gb_per_s = gb_per_s(bytes_, h2d);
            measure.d2h_gb_per_s = gb_per_s(bytes_, d2h);
            measure.detail =
                fmt::format("{} MiB pinned, median of {} copies each way", bytes_ >> 20, std::max(repeats, 1));
            measure.ok = true;
        } catch (const CudaFailure& failure) {
            measure.detail = detail::describe_cuda_failure(failure, device_);
        }
        return measure;
    }

private:
    // Where the driver refuses to pin memory it did not allocate, its own
    // pinned allocation serves.
    void pin(std::unique_ptr<HostMemory> memory) {
        try {
            registered_ = std::make_unique<RegisteredMemory>(std::move(memory));
            host_data_ = registered_->get();
        } catch (const CudaFailure&) {
            (void)cudaGetLastError();
            pinned_ = std::make_unique<PinnedBuffer>(bytes_);
            std::memset(pinned_->get(), HostMemory::kFill, bytes_);
            host_data_ = pinned_->get();
        }
    }

    int device_;
    std::size_t bytes_;
    std::unique_ptr<RegisteredMemory> registered_;
    std::unique_ptr<PinnedBuffer> pinned_;
    void* host_data_ = nullptr;
    std::unique_ptr<detail::DeviceBuffer> device_buffer_;
    std::string error_;
};

// The peer's buffer mapped here, on either path, and the pull from it.
class PreparedPull final : public PeerPullCheck {
public:
    PreparedPull(int cuda_device, const PeerSource& source, std::string fault)
        : device_(cuda_device), source_(source), fault_(std::move(fault)) {
        if (source.path == PeerPath::legacy_ipc) {
            open_legacy();
        } else {
            open_cumem();
        }
        if (!status_) allocate();
    }

    ~PreparedPull() override {
        if (legacy_peer_) cudaIpcCloseMemHandle(legacy_peer_);
    }

    PeerPull run(int repeats) override {
        PeerPull pull;
        if (status_) {
            pull.status = *status_;
            pull.detail = detail_;
            return pull;
        }
        try {
            check_cuda(cudaSetDevice(device_), "cudaSetDevice");
            const std::size_t bytes = source_.bytes;
            detail::Stream& stream = *scratch_->stream;
            detail::DeviceBuffer& local = *scratch_->local;
            detail::DeviceBuffer& counters = *scratch_->counters;
            if constexpr (kFaultInjection)
                if (fault_ == "hang") check_cuda(detail::launch_spin_forever(stream.get()), "the planted hang");
            const double ms = median_ms(stream, repeats, [&] {
                check_cuda(cudaMemcpyAsync(local.get(), peer_, bytes, cudaMemcpyDeviceToDevice, stream.get()),
                           "cudaMemcpyAsync (peer to device)");
            });
            if (kFaultInjection && fault_ == "wrong-bytes") {
                const std::uint64_t planted = 0;  // a zeroed word in the middle of the copy
                check_cuda(cudaMemcpyAsync(static_cast<char*>(local.get()) + bytes / 2, &planted, sizeof planted,
                                           cudaMemcpyHostToDevice, stream.get()),
                           "cudaMemcpyAsync (the planted wrong word)");
            }
            const unsigned long long initial[2] = {0, ~0ull};
            check_cuda(cudaMemcpyAsync(counters.get(), initial, sizeof initial, cudaMemcpyHostToDevice, stream.get()),
                       "cudaMemcpyAsync");
            check_cuda(kernels::launch_verify_pattern(local.as<std::uint64_t>(), bytes / 8, source_.source_id,
                                                      counters.as<unsigned long long>(), stream.get()),
                       "the verifying kernel");
            const auto found = counters.download<unsigned long long>(stream.get());
            pull.gb_per_s = gb_per_s(bytes, ms);
            if (found[0] == 0) {
                pull.status = PeerPullStatus::passed;
                pull.detail = fmt::format("{} MiB, median of {} copies, every word checked{}", bytes >> 20,
                                          std::max(repeats, 1),
                                          in_process_ ? " (both GPUs in one worker: through peer access)"
                                          : imported_ && imported_->reused()
                                              ? " (memory this worker had imported already)"
                                              : "");
            } else {
                pull.status = PeerPullStatus::wrong_bytes;
                pull.detail =
                    fmt::format("{} of {} words wrong, the first at byte {}", found[0], bytes / 8, found[1] * 8);
            }
        } catch (const CudaFailure& failure) {
            pull.status = PeerPullStatus::error;
            pull.detail = detail::describe_cuda_failure(failure, device_);
        }
        // Unmapped at once (an exporter frees a legacy buffer once its pairs
        // are done); the scratch goes to this GPU's next pull.
        if (legacy_peer_) cudaIpcCloseMemHandle(legacy_peer_);
        legacy_peer_ = nullptr;
        imported_.reset();
        give_back(std::move(scratch_));
        return pull;
    }

private:
    // What the copies need besides the mapping, before they are asked for:
    // the local buffer (poisoned, so that a copy that moves nothing fails,
    // nor one that leaves an earlier pull's words), the counters of the
    // check and a stream.
    void allocate() {
        try {
            check_cuda(cudaSetDevice(device_), "cudaSetDevice");
            scratch_ = take_scratch(device_, source_.bytes);
            scratch_->local->poison(scratch_->stream->get());
        } catch (const CudaFailure& failure) {
            status_ = PeerPullStatus::error;
            detail_ = detail::describe_cuda_failure(failure, device_);
        }
    }

    void open_legacy() {
        if (const auto here = exported_here(source_.handle)) {
            if (enable_peer_access(here->device)) peer_ = here->legacy;
            return;
        }
        cudaIpcMemHandle_t handle;
        if (!from_hex(source_.handle, &handle, sizeof handle)) {
            status_ = PeerPullStatus::error;
            detail_ = "the source's buffer handle is malformed";
            return;
        }
        if (const cudaError_t set = cudaSetDevice(device_); set != cudaSuccess) {
            status_ = PeerPullStatus::error;
            detail_ = detail::describe_cuda_failure(CudaFailure(set, "cudaSetDevice"), device_);
            return;
        }
        // Maps the buffer and enables peer access to its GPU; where peer
        // access is impossible this fails, so the copy is a peer copy.
        const cudaError_t opened = cudaIpcOpenMemHandle(&legacy_peer_, handle, cudaIpcMemLazyEnablePeerAccess);
        if (opened == cudaSuccess) {
            peer_ = legacy_peer_;
            return;
        }
        cudaGetLastError();  // not sticky: clear it
        legacy_peer_ = nullptr;
        status_ = opened == cudaErrorPeerAccessUnsupported ? PeerPullStatus::no_peer_access : PeerPullStatus::path_failed;
        detail_ = opened == cudaErrorPeerAccessUnsupported
                      ? "CUDA cannot enable peer access between the two GPUs (cudaErrorPeerAccessUnsupported)"
                      : detail::describe_cuda_failure(CudaFailure(opened, "cudaIpcOpenMemHandle"), device_);
    }

    // The source's GPU is opened by this process too (a worker of several
    // GPUs): its buffer is read through peer access, as NCCL's ranks of one
    // process read each other's ("P2P/direct pointer").  False with the
    // status set when CUDA refuses.
    bool enable_peer_access(int source_device) {
        cudaError_t status = cudaSetDevice(device_);
        if (status == cudaSuccess) {
            status = cudaDeviceEnablePeerAccess(source_device, 0);
            if (status == cudaErrorPeerAccessAlreadyEnabled) status = cudaSuccess;
        }
        if (status == cudaSuccess) {
            in_process_ = true;
            return true;
        }
        cudaGetLastError();  // not sticky: clear it
        status_ = status == cudaErrorPeerAccessUnsupported ? PeerPullStatus::no_peer_access : PeerPullStatus::error;
        detail_ = status == cudaErrorPeerAccessUnsupported
                      ? "CUDA cannot enable peer access between the two GPUs (cudaErrorPeerAccessUnsupported)"
                      : detail::describe_cuda_failure(CudaFailure(status, "cudaDeviceEnablePeerAccess"), device_);
        return false;
    }

    void open_cumem() {
        if (const cudaError_t set = cudaSetDevice(device_); set != cudaSuccess) {
            status_ = PeerPullStatus::error;
            detail_ = detail::describe_cuda_failure(CudaFailure(set, "cudaSetDevice"), device_);
            return;
        }
        cumem::Failure failure;
        if (const auto here = exported_here(source_.handle)) {
            // As NCCL within a process: peer access, and the allocation mapped again.
            if (!enable_peer_access(here->device)) return;
            imported_ = cumem::ImportedBuffer::map_own(runtime_driver(), device_, here->handle, here->bytes, failure);
        } else {
            imported_ = cumem::ImportedBuffer::open(runtime_driver(), device_, source_.handle, 30.0, failure);
        }
        if (imported_) {
            peer_ = reinterpret_cast<void*>(imported_->address());
            return;
        }
        status_ = failure.code == cumem::kErrorPeerAccessUnsupported ? PeerPullStatus::no_peer_access
                                                                    : PeerPullStatus::path_failed;
        detail_ = failure.detail;
    }

    int device_;
    PeerSource source_;
    std::string fault_;
    void* legacy_peer_ = nullptr;
    std::unique_ptr<cumem::ImportedBuffer> imported_;
    void* peer_ = nullptr;
    bool in_process_ = false;  // read through peer access within this process
    std::unique_ptr<PullScratch> scratch_;
    std::optional<PeerPullStatus> status_;  // set when the buffer could not be mapped
    std::string detail_;
};

bool touch_from_gpu(cumem::DevicePointer address, std::size_t bytes, std::string& why) {
    void* pointer = reinterpret_cast<void*>(address);
    std::uint32_t back = 0;
    cudaError_t status = cudaMemset(pointer, 0x5A, bytes);
    if (status == cudaSuccess) status = cudaMemcpy(&back, pointer, sizeof back, cudaMemcpyDeviceToHost);
    if (status != cudaSuccess) {
        why = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
        cudaGetLastError();
        return false;
    }
    if (back != 0x5A5A5A5Au) {
        why = fmt::format("read back {:#x}, not 0x5a5a5a5a", back);
        return false;
    }
    return true;
}

// The fabric check's two mappings of one allocation: a pattern written
// through `through` by the GPU must read back through `back`.
bool pattern_through_fabric(cumem::DevicePointer through, cumem::DevicePointer back, std::size_t bytes,
                            std::string& why) {
    constexpr int kPatternId = 0x6a;  // any source id: the pattern is a hash of it and the offset
    const std::uint64_t words = bytes / sizeof(std::uint64_t);
    unsigned long long* wrong = nullptr;
    cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&wrong), 2 * sizeof(unsigned long long));
    const unsigned long long start[2] = {0, ~0ull};
    unsigned long long counted[2] = {0, 0};
    if (status == cudaSuccess) status = cudaMemcpy(wrong, start, sizeof start, cudaMemcpyHostToDevice);
    if (status == cudaSuccess)
        status = kernels::launch_fill_pattern(reinterpret_cast<std::uint64_t*>(through), words, kPatternId, nullptr);
    if (status == cudaSuccess) status = cudaDeviceSynchronize();
    if (status == cudaSuccess)
        status = kernels::launch_verify_pattern(reinterpret_cast<const std::uint64_t*>(back), words, kPatternId, wrong,
                                                nullptr);
    if (status == cudaSuccess) status = cudaMemcpy(counted, wrong, sizeof counted, cudaMemcpyDeviceToHost);
    if (wrong) cudaFree(wrong);
    if (status != cudaSuccess) {
        why = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
        cudaGetLastError();
        return false;
    }
    if (counted[0] != 0) {
        why = fmt::format("{} of {} words wrong, the first at word {}", counted[0], words, counted[1]);
        return false;
    }
    return true;
}

}  // namespace

std::unique_ptr<HostLinkCheck> prepare_host_link(int cuda_device, std::unique_ptr<HostMemory> memory) {
    return std::make_unique<PreparedHostLink>(cuda_device, std::move(memory));
}

PeerExport export_peer_buffer(int cuda_device, int source_id, std::size_t bytes, PeerPath path) {
    PeerExport exported;
    void* buffer = nullptr;
    try {
        check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        if (path == PeerPath::cumem_fd) {
            cumem::Failure failure;
            auto shared = cumem::SharedBuffer::create(runtime_driver(), cuda_device, bytes, failure);
            if (!shared) {
                exported.detail = failure.detail;
                return exported;
            }
            check_cuda(kernels::launch_fill_pattern(reinterpret_cast<std::uint64_t*>(shared->address()), bytes / 8,
                                                    source_id, nullptr),
                       "the pattern kernel");
            check_cuda(cudaDeviceSynchronize(), "the pattern kernel");
            exported.handle = shared->socket_name();
            keep_exported({cuda_device, exported.handle, nullptr, std::move(shared)});
            exported.ok = true;
            return exported;
        }
        check_cuda(cudaMalloc(&buffer, bytes), "cudaMalloc");
        check_cuda(kernels::launch_fill_pattern(static_cast<std::uint64_t*>(buffer), bytes / 8, source_id, nullptr),
                   "the pattern kernel");
        check_cuda(cudaDeviceSynchronize(), "the pattern kernel");
        cudaIpcMemHandle_t handle;
        check_cuda(cudaIpcGetMemHandle(&handle, buffer), "cudaIpcGetMemHandle");
        exported.handle = to_hex(&handle, sizeof handle);
        keep_exported({cuda_device, exported.handle, buffer, nullptr});
        exported.ok = true;
    } catch (const CudaFailure& failure) {
        if (buffer) cudaFree(buffer);
        exported.detail = detail::describe_cuda_failure(failure, cuda_device);
    }
    return exported;
}

void release_peer_buffers(int cuda_device) {
    {
        SpareScratch& scratch = spare_scratch();
        std::lock_guard lock(scratch.mutex);
        auto& spare = scratch.spare;
        const auto of_this_gpu = [&](const auto& one) { return one->device == cuda_device; };
        if (std::any_of(spare.begin(), spare.end(), of_this_gpu)) cudaSetDevice(cuda_device);  // freed below
        spare.erase(std::remove_if(spare.begin(), spare.end(), of_this_gpu), spare.end());
    }
    ExportedBuffers& exported = exported_buffers();
    std::lock_guard lock(exported.mutex);
    auto& buffers = exported.buffers;
    buffers.erase(std::remove_if(buffers.begin(), buffers.end(),
                                 [&](const ExportedBuffer& buffer) {
                                     if (buffer.device != cuda_device) return false;
                                     if (buffer.legacy && cudaSetDevice(cuda_device) == cudaSuccess) cudaFree(buffer.legacy);
                                     return true;
                                 }),
                  buffers.end());
}

std::unique_ptr<PeerPullCheck> prepare_pull(int cuda_device, const PeerSource& source, const std::string& fault) {
    return std::make_unique<PreparedPull>(cuda_device, source, fault);
}

HostMemoryCheck check_host_numa_memory(int cuda_device) {
    HostMemoryCheck check;
    if (const cudaError_t set = cudaSetDevice(cuda_device); set != cudaSuccess) {
        check.detail = detail::describe_cuda_failure(CudaFailure(set, "cudaSetDevice"), cuda_device);
        return check;
    }
    const auto result = cumem::allocate_host_numa(runtime_driver(), cuda_device, touch_from_gpu);
    check.ok = result.ok;
    check.numa_node = result.numa_node;
    check.detail = result.ok ? fmt::format("{} KiB at host NUMA node {}, mapped and written by the GPU",
                                           result.bytes >> 10, result.numa_node)
                             : result.failure.detail;
    return check;
}

FabricHandleLinkCheck check_fabric_handle(int cuda_device) {
    FabricHandleLinkCheck check;
    if (const cudaError_t set = cudaSetDevice(cuda_device); set != cudaSuccess) {
        // The GPU was not reached, so nothing of the fabric was tried: no finding, no setting.
        check.status = FabricHandleStatus::not_measured;
        check.detail = detail::describe_cuda_failure(CudaFailure(set, "cudaSetDevice"), cuda_device);
        return check;
    }
    const auto result = cumem::check_fabric_handle(runtime_driver(), cuda_device, pattern_through_fabric);
    check.cuda_error = result.failure.code;
    if (!result.supported) {
        check.status = FabricHandleStatus::unsupported;
        check.detail = result.failure.detail;
    } else if (result.ok) {
        check.status = FabricHandleStatus::passed;
        check.detail = fmt::format("{} KiB with a fabric handle: exported, imported, mapped, and a pattern written "
                                   "through the import read back",
                                   result.bytes >> 10);
    } else {
        check.detail = result.failure.detail;
    }
    return check;
}

}  // namespace provision::links
