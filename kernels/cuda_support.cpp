#include "cuda_support.h"

#include <fmt/format.h>

#include <cstdlib>

#ifndef PROVISION_CUDA_ARCHITECTURES
#define PROVISION_CUDA_ARCHITECTURES "unknown"
#endif

namespace provision::kernels::detail {

CudaFailure::CudaFailure(cudaError_t status, const std::string& call)
    : std::runtime_error(fmt::format("{}: {}", call, cudaGetErrorName(status))), status_(status), call_(call) {}

void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw CudaFailure(status, call);
}

std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

namespace {

std::string capability_of(int device) {
    int major = 0, minor = 0;
    if (device < 0 || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
        return "unknown";
    return fmt::format("sm_{}{}", major, minor);
}

std::string consequence(cudaError_t status, int device) {
    switch (status) {
        case cudaErrorInsufficientDriver:
        case cudaErrorCallRequiresNewerDriver: {
            int driver = 0;
            cudaDriverGetVersion(&driver);
            if (driver == 0)
                return fmt::format("no NVIDIA driver is loaded (libcuda.so.1 not found); the kernels need one for "
                                   "CUDA {} or newer",
                                   cuda_version_text(CUDART_VERSION));
            return fmt::format("the kernels need a driver for CUDA {} or newer; this driver supports CUDA {}",
                               cuda_version_text(CUDART_VERSION), cuda_version_text(driver));
        }
        // Which GPUs the process was given is the parent's to say: it set
        // the worker's CUDA_VISIBLE_DEVICES.
        case cudaErrorNoDevice: return "no GPU is visible to CUDA in this process";
        case cudaErrorInvalidDevice: return fmt::format("CUDA has no device {} in this process", device);
        case cudaErrorNoKernelImageForDevice:
        case cudaErrorInvalidPtx:
        case cudaErrorUnsupportedPtxVersion:
            return fmt::format("no kernel image for this GPU ({}); this build carries {}", capability_of(device),
                               PROVISION_CUDA_ARCHITECTURES);
        case cudaErrorSystemNotReady:
            return "CUDA error 802: on an NVSwitch machine (HGX, DGX) the fabric is not set up yet; start the host's "
                   "nvidia-fabricmanager service, of the same version as the driver";
        case cudaErrorECCUncorrectable:
            return "the GPU reported an uncorrectable ECC error; it needs attention (nvidia-smi -q -d ECC)";
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorHardwareStackError:
            return "a kernel faulted; the CUDA context is unusable for the rest of this process";
        case cudaErrorDevicesUnavailable:
            return "the GPU is busy or in exclusive-process mode";
        default: return {};
    }
}

}  // namespace

std::string describe_cuda_failure(const CudaFailure& failure, int device) {
    std::string text = fmt::format("{}: {} ({})", failure.call(), cudaGetErrorName(failure.status()),
                                   cudaGetErrorString(failure.status()));
    if (const std::string meaning = consequence(failure.status(), device); !meaning.empty())
        text += fmt::format("; {}", meaning);
    return text;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    check_cuda(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

void DeviceSpan::poison(cudaStream_t stream) const {
    check_cuda(cudaMemsetAsync(data_, 0xFF, bytes_, stream), "cudaMemsetAsync");
}

void DeviceSpan::copy_from_host(const void* host, std::size_t bytes, cudaStream_t stream) const {
    if (bytes > bytes_) throw std::length_error("DeviceSpan::copy_from_host: more bytes than the span holds");
    check_cuda(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (to the device)");
}

void DeviceSpan::copy_to_host(void* host, std::size_t bytes, std::size_t offset, cudaStream_t stream) const {
    if (offset > bytes_ || bytes > bytes_ - offset)
        throw std::length_error("DeviceSpan::copy_to_host: more bytes than the span holds");
    check_cuda(cudaMemcpyAsync(host, static_cast<const char*>(data_) + offset, bytes, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

DeviceSpan DeviceArena::take(std::size_t bytes) {
    const std::size_t size = footprint(bytes);
    if (size > buffer_.bytes() - used_) throw std::length_error("DeviceArena::take: more bytes than the arena holds");
    DeviceSpan span(buffer_.as<char>() + used_, bytes);
    used_ += size;
    return span;
}

Stream::Stream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
Stream::~Stream() { cudaStreamDestroy(stream_); }
void Stream::synchronize(const char* what) const { check_cuda(cudaStreamSynchronize(stream_), what); }

void Stream::wait_for(const Stream& other) const {
    cudaEvent_t reached = nullptr;
    check_cuda(cudaEventCreateWithFlags(&reached, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    // The wait holds once queued, so the event can go at once.
    const cudaError_t recorded = cudaEventRecord(reached, other.get());
    const cudaError_t waited = recorded == cudaSuccess ? cudaStreamWaitEvent(stream_, reached, 0) : recorded;
    cudaEventDestroy(reached);
    check_cuda(recorded, "cudaEventRecord");
    check_cuda(waited, "cudaStreamWaitEvent");
}

EventTimer::EventTimer() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
}

EventTimer::~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
}

void EventTimer::start(cudaStream_t stream) { check_cuda(cudaEventRecord(start_, stream), "cudaEventRecord"); }
void EventTimer::stop(cudaStream_t stream) { check_cuda(cudaEventRecord(stop_, stream), "cudaEventRecord"); }

double EventTimer::elapsed_ms() const {
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
}

}  // namespace provision::kernels::detail
