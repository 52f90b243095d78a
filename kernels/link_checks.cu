#include "link_checks.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda_support.h"
#include "kernel_launchers.h"

namespace provision::kernels {
namespace {

using detail::check_cuda;
using detail::CudaFailure;

// The word a source writes at an offset: a hash of both, never zero, so a
// buffer of zeros, one of another source, or a copy shifted by any number
// of words all fail.
__host__ __device__ std::uint64_t pattern_word(int source_id, std::uint64_t index) {
    std::uint64_t x = index * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(source_id + 1) * 0xD1B54A32D192ED03ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | 1;
}

__global__ void fill_pattern(std::uint64_t* words, std::uint64_t count, int source_id) {
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
        words[i] = pattern_word(source_id, i);
}

// Counts the words that differ from the pattern and keeps the first one.
__global__ void verify_pattern(const std::uint64_t* words, std::uint64_t count, int source_id,
                               unsigned long long* wrong, unsigned long long* first_wrong) {
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
        if (words[i] != pattern_word(source_id, i)) {
            atomicAdd(wrong, 1ull);
            atomicMin(first_wrong, static_cast<unsigned long long>(i));
        }
    }
}

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

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

std::vector<void*>& exported_buffers() {
    static std::vector<void*> buffers;
    return buffers;
}

}  // namespace

HostLinkMeasure measure_host_link(int cuda_device, std::size_t bytes, int repeats) {
    HostLinkMeasure measure;
    try {
        check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        detail::Stream stream;
        PinnedBuffer host(bytes);
        detail::DeviceBuffer device(bytes);
        std::memset(host.get(), 0x5A, bytes);
        const double h2d = median_ms(stream, repeats, [&] {
            check_cuda(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get()),
                       "cudaMemcpyAsync (host to device)");
        });
        const double d2h = median_ms(stream, repeats, [&] {
            check_cuda(cudaMemcpyAsync(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost, stream.get()),
                       "cudaMemcpyAsync (device to host)");
        });
        stream.synchronize("host link copies");
        measure.h2d_gb_per_s = gb_per_s(bytes, h2d);
        measure.d2h_gb_per_s = gb_per_s(bytes, d2h);
        measure.detail = fmt::format("{} MiB pinned, median of {} copies each way", bytes >> 20, std::max(repeats, 1));
        measure.ok = true;
    } catch (const CudaFailure& failure) {
        measure.detail = detail::describe_cuda_failure(failure, cuda_device);
    }
    return measure;
}

PeerExport export_peer_buffer(int cuda_device, int source_id, std::size_t bytes) {
    PeerExport exported;
    void* buffer = nullptr;
    try {
        check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        check_cuda(cudaMalloc(&buffer, bytes), "cudaMalloc");
        fill_pattern<<<kBlocks, kThreads>>>(static_cast<std::uint64_t*>(buffer), bytes / 8, source_id);
        check_cuda(cudaGetLastError(), "the pattern kernel");
        check_cuda(cudaDeviceSynchronize(), "the pattern kernel");
        cudaIpcMemHandle_t handle;
        check_cuda(cudaIpcGetMemHandle(&handle, buffer), "cudaIpcGetMemHandle");
        exported.handle = to_hex(&handle, sizeof handle);
        exported_buffers().push_back(buffer);
        exported.ok = true;
    } catch (const CudaFailure& failure) {
        if (buffer) cudaFree(buffer);
        exported.detail = detail::describe_cuda_failure(failure, cuda_device);
    }
    return exported;
}

void release_peer_exports() {
    for (void* buffer : exported_buffers()) cudaFree(buffer);
    exported_buffers().clear();
}

PeerPull pull_peer_buffer(int cuda_device, const std::string& handle_text, int source_id, std::size_t bytes,
                          int repeats, const std::string& fault) {
    PeerPull pull;
    cudaIpcMemHandle_t handle;
    if (!from_hex(handle_text, &handle, sizeof handle)) {
        pull.detail = "the source's buffer handle is malformed";
        return pull;
    }
    void* peer = nullptr;
    try {
        check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        // Maps the buffer and enables peer access to its GPU; where peer
        // access is impossible this fails, so the copy below is a peer copy.
        if (const cudaError_t opened = cudaIpcOpenMemHandle(&peer, handle, cudaIpcMemLazyEnablePeerAccess);
            opened == cudaErrorPeerAccessUnsupported) {
            cudaGetLastError();  // not sticky: clear it
            peer = nullptr;
            pull.status = PeerPullStatus::no_peer_access;
            pull.detail = "CUDA cannot enable peer access between the two GPUs (cudaErrorPeerAccessUnsupported)";
            return pull;
        } else {
            check_cuda(opened, "cudaIpcOpenMemHandle");
        }
        detail::Stream stream;
        if (fault == "hang") check_cuda(detail::launch_spin_forever(stream.get()), "the planted hang");
        detail::DeviceBuffer local(bytes);
        detail::DeviceBuffer counters(2 * sizeof(unsigned long long));
        local.poison(stream.get());
        const double ms = median_ms(stream, repeats, [&] {
            check_cuda(cudaMemcpyAsync(local.get(), peer, bytes, cudaMemcpyDeviceToDevice, stream.get()),
                       "cudaMemcpyAsync (peer to device)");
        });
        if (fault == "wrong-bytes") {
            const std::uint64_t planted = 0;  // a zeroed word in the middle of the copy
            check_cuda(cudaMemcpyAsync(static_cast<char*>(local.get()) + bytes / 2, &planted, sizeof planted,
                                       cudaMemcpyHostToDevice, stream.get()),
                       "cudaMemcpyAsync (the planted wrong word)");
        }
        const unsigned long long initial[2] = {0, ~0ull};
        check_cuda(cudaMemcpyAsync(counters.get(), initial, sizeof initial, cudaMemcpyHostToDevice, stream.get()),
                   "cudaMemcpyAsync");
        auto* words = counters.as<unsigned long long>();
        verify_pattern<<<kBlocks, kThreads, 0, stream.get()>>>(local.as<std::uint64_t>(), bytes / 8, source_id, words,
                                                               words + 1);
        check_cuda(cudaGetLastError(), "the verifying kernel");
        const auto found = counters.download<unsigned long long>(stream.get());
        pull.gb_per_s = gb_per_s(bytes, ms);
        if (found[0] == 0) {
            pull.status = PeerPullStatus::passed;
            pull.detail = fmt::format("{} MiB, median of {} copies, every word checked", bytes >> 20,
                                      std::max(repeats, 1));
        } else {
            pull.status = PeerPullStatus::wrong_bytes;
            pull.detail = fmt::format("{} of {} words wrong, the first at byte {}", found[0], bytes / 8, found[1] * 8);
        }
    } catch (const CudaFailure& failure) {
        pull.status = PeerPullStatus::error;
        pull.detail = detail::describe_cuda_failure(failure, cuda_device);
    }
    if (peer) cudaIpcCloseMemHandle(peer);
    return pull;
}

}  // namespace provision::kernels
