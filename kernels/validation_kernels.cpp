// run_check and friends, for builds with the CUDA kernels (stub.cpp stands
// in without a toolkit).
#include "validation_kernels.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <random>

#include "check_catalog.h"
#include "checks.h"
#include "cuda_support.h"

namespace provision::kernels {

bool kernels_available() { return true; }

std::string kernel_architectures() { return PROVISION_CUDA_ARCHITECTURES; }

DeviceProbe probe_devices() {
    DeviceProbe probe;
    try {
        int count = 0;
        detail::check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
        for (int i = 0; i < count; ++i) {
            cudaDeviceProp properties{};
            detail::check_cuda(cudaGetDeviceProperties(&properties, i), "cudaGetDeviceProperties");
            probe.devices.push_back({i, properties.name, properties.major, properties.minor});
        }
        if (count == 0) probe.detail = "CUDA reports no device";
    } catch (const detail::CudaFailure& failure) {
        probe.devices.clear();
        probe.detail = detail::describe_cuda_failure(failure, -1);
    }
    return probe;
}

namespace {

using detail::AttentionKernel;
using detail::CheckContext;

// The lowest compute capability (major * 10 + minor) each check runs on, and
// for the Hopper-only one the highest.
struct Requirement {
    int min_capability;
    int max_capability;
    const char* hardware;
};

Requirement requirement_of(const std::string& name) {
    if (name == "attention.fp16") return {75, 1000, "fp16 tensor cores through mma.sync (sm_75 or newer)"};
    if (name == "attention.bf16") return {80, 1000, "bf16 tensor cores through mma.sync (sm_80 or newer)"};
    if (name == "attention.bf16.wgmma") return {90, 90, "Hopper's warpgroup matrix instructions (sm_90)"};
    return {80, 1000, "TF32 tensor cores (sm_80 or newer)"};
}

detail::FaultKind parse_fault(const std::string& fault) {
    if (fault.empty()) return detail::FaultKind::none;
    if (fault == "wrong-result") return detail::FaultKind::wrong_result;
    if (fault == "hang") return detail::FaultKind::hang;
    throw std::invalid_argument(fmt::format("unknown fault '{}' (known: wrong-result, hang)", fault));
}

CheckResult dispatch(const std::string& name, const CheckContext& context) {
    const Requirement requirement = requirement_of(name);
    const int capability = context.major * 10 + context.minor;
    if (capability < requirement.min_capability || capability > requirement.max_capability) {
        CheckResult result;
        result.status = CheckStatus::unsupported;
        result.detail = fmt::format("needs {}; this GPU is sm_{}{}", requirement.hardware, context.major, context.minor);
        return result;
    }
    if (name == "attention.fp16") return detail::run_attention_check(context, ElementType::fp16, AttentionKernel::mma);
    if (name == "attention.bf16") return detail::run_attention_check(context, ElementType::bf16, AttentionKernel::mma);
    if (name == "attention.bf16.wgmma") {
#if PROVISION_HAVE_WGMMA
        return detail::run_attention_check(context, ElementType::bf16, AttentionKernel::wgmma);
#else
        CheckResult result;
        result.status = CheckStatus::unsupported;
        result.detail = "this build has no Hopper wgmma attention kernel";
        return result;
#endif
    }
    return detail::run_gemm_tf32_check(context);
}

}  // namespace

CheckResult run_check(int cuda_device, const std::string& name, const CheckOptions& options) {
    if (auto unknown = detail::reject_unknown_check(name)) return *unknown;
    CheckResult result;
    try {
        CheckContext context;
        context.device = cuda_device;
        context.full = options.full;
        context.fault = parse_fault(options.fault);
        context.seed = options.seed != 0 ? options.seed : std::random_device{}();
        detail::check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        detail::check_cuda(cudaDeviceGetAttribute(&context.major, cudaDevAttrComputeCapabilityMajor, cuda_device),
                           "cudaDeviceGetAttribute");
        detail::check_cuda(cudaDeviceGetAttribute(&context.minor, cudaDevAttrComputeCapabilityMinor, cuda_device),
                           "cudaDeviceGetAttribute");
        result = dispatch(name, context);
    } catch (const detail::CudaFailure& failure) {
        result = CheckResult{};
        result.status = CheckStatus::error;
        result.detail = detail::describe_cuda_failure(failure, cuda_device);
    } catch (const std::exception& failure) {
        result = CheckResult{};
        result.status = CheckStatus::error;
        result.detail = failure.what();
    }
    result.name = name;
    return result;
}

}  // namespace provision::kernels
