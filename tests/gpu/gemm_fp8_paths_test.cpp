// Both fp8 GEMM kernels on the first GPU through the check's two halves: the
// host half (inputs, references, tolerance; no CUDA call) on a thread while
// this thread sets the device up, then the device half per kernel.  Every
// problem's error against its bound is printed, so a run on new hardware
// shows how much room the accumulation model leaves.
#include <future>
#include <string>

#include "checks.h"
#include "cuda_support.h"
#include "cuda_test_support.h"
#include "gemm_fp8_host.h"
#include "gpu_test_support.h"

using namespace provision;
using namespace provision::kernels::detail;

namespace {

CheckContext context_for(const kernels::DeviceInfo& device, std::uint64_t seed) {
    CheckContext context;
    context.device = device.index;
    context.major = device.major;
    context.minor = device.minor;
    context.seed = seed;
    return context;
}

// Each problem's verdict with this kernel, printed as a table row.
void run_and_print(const kernels::DeviceInfo& device, const kernels::Fp8GemmInputs& inputs, Fp8GemmKernel kernel,
                   const char* name) {
    kernels::CheckResult result = run_gemm_fp8_device(context_for(device, inputs.seed), inputs, kernel);
    result.name = name;
    gpu_tests::print_row("fp8 split", device, result);
    INFO(name << ": " << result.detail);
    CHECK(result.status == kernels::CheckStatus::passed);
    CHECK(result.max_rel_error <= result.tolerance);
}

}  // namespace

TEST_CASE("fp8 GEMM: the host half on a thread, then each kernel's device half", "[gpu][fp8]") {
    const auto device = gpu_tests::device_or_skip();
    if (!device) return;
    if (gpu_tests::capability(*device) < 89) {
        WARN("skipped: fp8 tensor cores need sm_89 or newer; this GPU is sm_" << device->major << device->minor);
        return;
    }
    // The device is set up only now (not by current_device_or_skip), while the host half runs.
    auto host_half = std::async(std::launch::async, [] { return kernels::prepare_gemm_fp8_inputs(4242, false); });
    (void)cudaGetLastError();
    check_cuda(cudaSetDevice(device->index), "cudaSetDevice");
    check_cuda(cudaFree(nullptr), "context creation");
    const kernels::Fp8GemmInputs inputs = host_half.get();
    REQUIRE(inputs.problems.size() == 12);

    run_and_print(*device, inputs, Fp8GemmKernel::mma_sync, "gemm.fp8 (mma.sync)");
    if (gpu_tests::capability(*device) == 90) run_and_print(*device, inputs, Fp8GemmKernel::wgmma, "gemm.fp8.wgmma");
}

TEST_CASE("fp8 GEMM: every problem's error against its bound, per kernel", "[gpu][fp8]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    if (gpu_tests::capability(*device) < 89) return;
    const kernels::Fp8GemmInputs inputs = kernels::prepare_gemm_fp8_inputs(777, false);
    std::vector<std::pair<Fp8GemmKernel, std::string>> kernels_to_run = {{Fp8GemmKernel::mma_sync, "mma.sync"}};
    if (gpu_tests::capability(*device) == 90) kernels_to_run.push_back({Fp8GemmKernel::wgmma, "wgmma"});
    Stream stream;
    for (const auto& [kernel, kernel_name] : kernels_to_run) {
        for (const auto& problem : inputs.problems) {
            DeviceBuffer a(problem.a.size()), b(problem.b.size()), c(problem.exact.size() * sizeof(float));
            a.upload(problem.a, stream.get());
            b.upload(problem.b, stream.get());
            c.poison(stream.get());
            const cudaError_t launched =
                kernel == Fp8GemmKernel::wgmma
                    ? launch_gemm_fp8_wgmma(problem.a_format, problem.b_format, a.as<std::uint8_t>(),
                                            b.as<std::uint8_t>(), c.as<float>(), problem.m, problem.n, problem.k,
                                            problem.scale, stream.get(), FaultKind::none)
                    : launch_gemm_fp8(problem.a_format, problem.b_format, a.as<std::uint8_t>(), b.as<std::uint8_t>(),
                                      c.as<float>(), problem.m, problem.n, problem.k, problem.scale, stream.get(),
                                      FaultKind::none);
            if (launched == cudaErrorNotSupported) {
                WARN("this build has no wgmma fp8 kernel");
                break;
            }
            check_cuda(launched, "fp8 gemm launch");
            stream.synchronize("fp8 gemm");
            const auto verdict = kernels::judge_gemm_fp8(problem, c.download<float>(stream.get()));
            fmt::print("| fp8 {} | {} | error {:.3e} | bound {:.3e} | model's own {:.3e} | ratio {:.3f} | {} |\n",
                       kernel_name, problem.label, verdict.error, verdict.tolerance, problem.accumulation_error,
                       verdict.ratio(), verdict.problem.empty() ? "ok" : verdict.problem);
            INFO(kernel_name << ", " << problem.label << ": " << verdict.problem);
            CHECK(verdict.problem.empty());
        }
    }
}

TEST_CASE("fp8 GEMM: a kernel refuses k that is not a multiple of 16", "[gpu][fp8]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    if (gpu_tests::capability(*device) < 89) return;
    DeviceBuffer a(64 * 40), b(64 * 40), c(64 * 64 * 4);
    CHECK(launch_gemm_fp8(kernels::Fp8Format::e4m3, kernels::Fp8Format::e4m3, a.as<std::uint8_t>(),
                          b.as<std::uint8_t>(), c.as<float>(), 64, 64, 40, 1.f, nullptr,
                          FaultKind::none) == cudaErrorInvalidValue);
}
