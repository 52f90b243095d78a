// run_check and friends, for builds with the CUDA kernels (stub.cpp stands
// in without a toolkit).
#include "validation_kernels.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

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
    if (!kFaultInjection) throw std::invalid_argument("this build plants no faults (a release build)");
    if (fault == "wrong-result") return detail::FaultKind::wrong_result;
    if (fault == "hang") return detail::FaultKind::hang;
    throw std::invalid_argument(fmt::format("unknown fault '{}' (known: wrong-result, hang)", fault));
}

std::string uuid_text(const cudaUUID_t& uuid) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                       b[15]);
}

// A check whose result is known before any device work: an unknown name, a
// bad fault word.
class FixedResult final : public PreparedCheck {
public:
    explicit FixedResult(CheckResult result) : result_(std::move(result)) {}
    CheckResult run(int) override { return result_; }

private:
    CheckResult result_;
};

// The device half every check shares: the device made current, its compute
// capability held against the check's range, CUDA failures made results.
class DeviceCheck : public PreparedCheck {
public:
    DeviceCheck(const CheckEntry& entry, CheckContext context) : entry_(entry), context_(context) {}

    CheckResult run(int cuda_device) override {
        CheckResult result;
        try {
            CheckContext context = context_;
            context.device = cuda_device;
            detail::check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
            detail::check_cuda(cudaDeviceGetAttribute(&context.major, cudaDevAttrComputeCapabilityMajor, cuda_device),
                               "cudaDeviceGetAttribute");
            detail::check_cuda(cudaDeviceGetAttribute(&context.minor, cudaDevAttrComputeCapabilityMinor, cuda_device),
                               "cudaDeviceGetAttribute");
            const int capability = context.major * 10 + context.minor;
            if (capability < entry_.min_capability || capability > entry_.max_capability) {
                result.status = CheckStatus::unsupported;
                result.detail =
                    fmt::format("needs {}; this GPU is sm_{}{}", entry_.hardware, context.major, context.minor);
            } else {
                result = run_on(context);
            }
        } catch (const detail::CudaFailure& failure) {
            result = CheckResult{};
            result.status = CheckStatus::error;
            result.detail = detail::describe_cuda_failure(failure, cuda_device);
        } catch (const std::exception& failure) {
            result = CheckResult{};
            result.status = CheckStatus::error;
            result.detail = failure.what();
        }
        result.name = entry_.name;
        return result;
    }

protected:
    virtual CheckResult run_on(const CheckContext& context) = 0;

private:
    const CheckEntry& entry_;
    CheckContext context_;
};

class AttentionCheck final : public DeviceCheck {
public:
    AttentionCheck(const CheckEntry& entry, const CheckContext& context, ElementType type, AttentionKernel kernel)
        : DeviceCheck(entry, context), kernel_(kernel), inputs_(detail::prepare_attention_inputs(type, context.seed)) {}

private:
    CheckResult run_on(const CheckContext& context) override {
        if (kernel_ == AttentionKernel::wgmma && !PROVISION_HAVE_WGMMA) {
            CheckResult result;
            result.status = CheckStatus::unsupported;
            result.detail = "this build has no Hopper wgmma attention kernel";
            return result;
        }
        return detail::run_attention_check(context, kernel_, inputs_);
    }

    AttentionKernel kernel_;
    detail::AttentionInputs inputs_;
};

class GemmTf32Check final : public DeviceCheck {
public:
    GemmTf32Check(const CheckEntry& entry, const CheckContext& context)
        : DeviceCheck(entry, context), inputs_(detail::prepare_gemm_tf32_inputs(context.seed)) {}

private:
    CheckResult run_on(const CheckContext& context) override { return detail::run_gemm_tf32_check(context, inputs_); }

    detail::GemmInputs inputs_;
};

using SharedFp8Inputs = std::shared_ptr<const Fp8GemmInputs>;

// The fp8 host half, made once for both fp8 checks of one seed: its
// accumulator model is the costliest reference of all, and the device
// halves only read it.  The last seed's is kept; a check of that seed
// prepared meanwhile waits for it rather than making it again.
SharedFp8Inputs shared_gemm_fp8_inputs(std::uint64_t seed, bool full) {
    static std::mutex mutex;
    static std::optional<std::pair<std::uint64_t, bool>> last_key;
    static std::shared_future<SharedFp8Inputs> last;
    std::promise<SharedFp8Inputs> making;
    std::shared_future<SharedFp8Inputs> ours;
    bool maker = false;
    {
        std::lock_guard lock(mutex);
        if (last_key != std::pair{seed, full}) {
            last_key = std::pair{seed, full};
            last = making.get_future().share();
            maker = true;
        }
        ours = last;
    }
    if (maker) {
        try {
            making.set_value(std::make_shared<const Fp8GemmInputs>(prepare_gemm_fp8_inputs(seed, full)));
        } catch (...) {
            making.set_exception(std::current_exception());
        }
    }
    return ours.get();  // the maker's failure, if it failed
}

// gemm.fp8 and gemm.fp8.wgmma: one host half (shared_gemm_fp8_inputs), the
// device half with either kernel.
class GemmFp8Check final : public DeviceCheck {
public:
    GemmFp8Check(const CheckEntry& entry, const CheckContext& context, detail::Fp8GemmKernel kernel)
        : DeviceCheck(entry, context), kernel_(kernel), inputs_(shared_gemm_fp8_inputs(context.seed, context.full)) {}

private:
    CheckResult run_on(const CheckContext& context) override {
        if (kernel_ == detail::Fp8GemmKernel::wgmma && !PROVISION_HAVE_WGMMA) {
            CheckResult result;
            result.status = CheckStatus::unsupported;
            result.detail = "this build has no Hopper wgmma fp8 GEMM kernel";
            return result;
        }
        return detail::run_gemm_fp8_device(context, *inputs_, kernel_);
    }

    detail::Fp8GemmKernel kernel_;
    SharedFp8Inputs inputs_;
};

// The caller has rejected unknown names (detail::reject_unknown_check).
std::unique_ptr<PreparedCheck> prepare_known(const CheckEntry& check, const CheckContext& context) {
    switch (check.kind) {
        case CheckKind::attention_fp16:
            return std::make_unique<AttentionCheck>(check, context, ElementType::fp16, AttentionKernel::mma);
        case CheckKind::attention_bf16:
            return std::make_unique<AttentionCheck>(check, context, ElementType::bf16, AttentionKernel::mma);
        case CheckKind::attention_bf16_wgmma:
            return std::make_unique<AttentionCheck>(check, context, ElementType::bf16, AttentionKernel::wgmma);
        case CheckKind::gemm_tf32:
            return std::make_unique<GemmTf32Check>(check, context);
        case CheckKind::gemm_fp8:
            return std::make_unique<GemmFp8Check>(check, context, detail::Fp8GemmKernel::mma_sync);
        case CheckKind::gemm_fp8_wgmma:
            return std::make_unique<GemmFp8Check>(check, context, detail::Fp8GemmKernel::wgmma);
    }
    throw std::logic_error("a check kind without a runner");
}

}  // namespace

OpenedDevice open_device(int cuda_device) {
    OpenedDevice device;
    try {
        cudaDeviceProp properties{};
        detail::check_cuda(cudaGetDeviceProperties(&properties, cuda_device), "cudaGetDeviceProperties");
        device.major = properties.major;
        device.minor = properties.minor;
        device.uuid = uuid_text(properties.uuid);
        device.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", properties.pciDomainID, properties.pciBusID,
                                        properties.pciDeviceID);
        detail::check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        detail::check_cuda(cudaFree(nullptr), "cudaFree (creating the context)");
        device.ok = true;
    } catch (const detail::CudaFailure& failure) {
        device.ok = false;
        device.detail = detail::describe_cuda_failure(failure, cuda_device);
        device.full = failure.status() == cudaErrorMemoryAllocation || failure.status() == cudaErrorDevicesUnavailable;
    }
    return device;
}

std::unique_ptr<PreparedCheck> prepare_check(const std::string& name, const CheckOptions& options) {
    if (auto unknown = detail::reject_unknown_check(name)) return std::make_unique<FixedResult>(*unknown);
    try {
        CheckContext context;
        context.full = options.full;
        context.fault = parse_fault(options.fault);
        context.seed = options.seed != 0 ? options.seed : std::random_device{}();
        return prepare_known(*find_check(name), context);
    } catch (const std::exception& failure) {
        CheckResult result;
        result.name = name;
        result.status = CheckStatus::error;
        result.detail = failure.what();
        return std::make_unique<FixedResult>(std::move(result));
    }
}

CheckResult run_check(int cuda_device, const std::string& name, const CheckOptions& options) {
    return prepare_check(name, options)->run(cuda_device);
}

}  // namespace provision::kernels
