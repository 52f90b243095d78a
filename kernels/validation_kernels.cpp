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

detail::FaultKind parse_fault(const std::string& fault) {
    if (fault.empty()) return detail::FaultKind::none;
    if (fault == "wrong-result") return detail::FaultKind::wrong_result;
    if (fault == "hang") return detail::FaultKind::hang;
    throw std::invalid_argument(fmt::format("unknown fault '{}' (known: wrong-result, hang)", fault));
}

// The caller has rejected unknown names (detail::reject_unknown_check).
CheckResult dispatch(const CheckEntry& check, const CheckContext& context) {
    const int capability = context.major * 10 + context.minor;
    if (capability < check.min_capability || capability > check.max_capability) {
        CheckResult result;
        result.status = CheckStatus::unsupported;
        result.detail = fmt::format("needs {}; this GPU is sm_{}{}", check.hardware, context.major, context.minor);
        return result;
    }
    switch (check.kind) {
        case CheckKind::attention_fp16:
            return detail::run_attention_check(context, ElementType::fp16, AttentionKernel::mma);
        case CheckKind::attention_bf16:
            return detail::run_attention_check(context, ElementType::bf16, AttentionKernel::mma);
        case CheckKind::attention_bf16_wgmma: {
#if PROVISION_HAVE_WGMMA
            return detail::run_attention_check(context, ElementType::bf16, AttentionKernel::wgmma);
#else
            CheckResult result;
            result.status = CheckStatus::unsupported;
            result.detail = "this build has no Hopper wgmma attention kernel";
            return result;
#endif
        }
        case CheckKind::gemm_tf32:
            return detail::run_gemm_tf32_check(context);
        case CheckKind::gemm_fp8:
            return detail::run_gemm_fp8_check(context, detail::Fp8GemmKernel::mma_sync);
        case CheckKind::gemm_fp8_wgmma: {
#if PROVISION_HAVE_WGMMA
            return detail::run_gemm_fp8_check(context, detail::Fp8GemmKernel::wgmma);
#else
            CheckResult result;
            result.status = CheckStatus::unsupported;
            result.detail = "this build has no Hopper wgmma fp8 GEMM kernel";
            return result;
#endif
        }
    }
    throw std::logic_error("a check kind without a runner");
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
        result = dispatch(*find_check(name), context);
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
