// CUDA plumbing for the check harness: errors as exceptions inside kernels/
// (run_check turns them into CheckResult values), device memory and event
// timers that clean up after themselves.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace provision::kernels::detail {

class CudaFailure : public std::runtime_error {
public:
    CudaFailure(cudaError_t status, const std::string& call);
    cudaError_t status() const { return status_; }
    const std::string& call() const { return call_; }

private:
    cudaError_t status_;
    std::string call_;
};

// Throws CudaFailure unless status is cudaSuccess; `call` names what failed.
void check_cuda(cudaError_t status, const char* call);

// "cudaMalloc: cudaErrorMemoryAllocation (out of memory)", followed by what
// the error means for this program where that is useful (which CUDA version
// the kernels need, which architectures they carry, ...).
std::string describe_cuda_failure(const CudaFailure& failure, int device);

// "12.8" from CUDA's 12080.
std::string cuda_version_text(int version);

// A stretch of device memory this code does not own (part of a
// DeviceBuffer): copies to and from the host and the poison fill.
class DeviceSpan {
public:
    DeviceSpan() = default;
    DeviceSpan(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}

    void* get() const { return data_; }
    template <typename T>
    T* as() const { return static_cast<T*>(data_); }
    std::size_t bytes() const { return bytes_; }

    // Fills every byte with 0xFF: a NaN in fp16, bf16 and fp32 alike.
    void poison(cudaStream_t stream) const;

    // The whole span, once the stream's work before it is done.
    template <typename T>
    std::vector<T> download(cudaStream_t stream) const {
        std::vector<T> host(bytes_ / sizeof(T));
        download_into(host, stream);
        return host;
    }
    // The whole span into `host`, sized for it beforehand (a span that is no
    // whole number of T is refused, never copied past the buffer's end).
    template <typename T>
    void download_into(std::vector<T>& host, cudaStream_t stream) const {
        if (host.size() * sizeof(T) != bytes_) throw std::logic_error("a download into a buffer of another size");
        copy_to_host(host.data(), bytes_, 0, stream);
    }
    // Waits for the stream: the bytes are on the host when it returns.
    void copy_to_host(void* host, std::size_t bytes, std::size_t offset, cudaStream_t stream) const;

    // Queues a copy of host data into the start of the span (at most bytes()).
    template <typename T>
    void upload(const std::vector<T>& host, cudaStream_t stream) const {
        copy_from_host(host.data(), host.size() * sizeof(T), stream);
    }
    void copy_from_host(const void* host, std::size_t bytes, cudaStream_t stream) const;

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Device memory of its own (one cudaMalloc, freed with it).
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* get() const { return data_; }
    template <typename T>
    T* as() const { return static_cast<T*>(data_); }
    std::size_t bytes() const { return bytes_; }
    DeviceSpan span() const { return {data_, bytes_}; }

    void poison(cudaStream_t stream) { span().poison(stream); }
    template <typename T>
    std::vector<T> download(cudaStream_t stream) const { return span().download<T>(stream); }
    void copy_to_host(void* host, std::size_t bytes, std::size_t offset, cudaStream_t stream) const {
        span().copy_to_host(host, bytes, offset, stream);
    }
    template <typename T>
    void upload(const std::vector<T>& host, cudaStream_t stream) { span().upload(host, stream); }
    void copy_from_host(const void* host, std::size_t bytes, cudaStream_t stream) { span().copy_from_host(host, bytes, stream); }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// Many tensors in one DeviceBuffer, each at a 256-byte boundary: a quick
// check's tensors take one cudaMalloc and one cudaFree (which waits for the
// whole device) instead of one each.  Size it with the sum of footprint()s.
class DeviceArena {
public:
    static std::size_t footprint(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
    explicit DeviceArena(std::size_t bytes) : buffer_(bytes) {}

    // The next `bytes`; throws std::length_error past the end.
    DeviceSpan take(std::size_t bytes);

private:
    DeviceBuffer buffer_;
    std::size_t used_ = 0;
};

class Stream {
public:
    Stream();
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return stream_; }
    void synchronize(const char* what) const;
    // Work queued on this stream from now on starts once what is queued on
    // `other` so far is done.
    void wait_for(const Stream& other) const;

private:
    cudaStream_t stream_ = nullptr;
};

// Device time between two points on a stream.
class EventTimer {
public:
    EventTimer();
    ~EventTimer();
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    void start(cudaStream_t stream);
    void stop(cudaStream_t stream);
    double elapsed_ms() const;  // waits for the stop event

private:
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
};

}  // namespace provision::kernels::detail
