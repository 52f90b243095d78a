// Both TF32 GEMM kernels on the first GPU, each launched explicitly: the
// mma.sync one everywhere from sm_80, the wgmma one on sm_90 (the gemm.tf32
// check exercises only the one `automatic` picks).  Fresh random inputs per
// shape, the output poisoned first, judged by the check's rule against fp64.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "cuda_test_support.h"
#include "gpu_test_support.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "reference_cpu.h"
#include "tolerance.h"

using namespace provision;
using namespace provision::kernels::detail;

namespace {

struct Outcome {
    double error = 0;
    double tolerance = 0;
    std::size_t unwritten = 0;
};

std::vector<float> rounded(std::vector<float> values) {
    std::transform(values.begin(), values.end(), values.begin(), kernels::round_to_tf32);
    return values;
}

// k not a multiple of the 32-deep k-slices, edges inside both tiles.
Outcome run_path(GemmTiling tiling, int m, int n, int k, std::uint64_t seed, FaultKind fault = FaultKind::none) {
    // An earlier test's deliberate bad device index leaves a stale error that
    // the next launch check would report.
    (void)cudaGetLastError();
    Stream stream;
    DeviceBuffer a(std::size_t(m) * k * 4), b(std::size_t(n) * k * 4), c(std::size_t(m) * n * 4);
    check_cuda(launch_fill_normal_float(a.as<float>(), std::size_t(m) * k, seed, stream.get()), "fill a");
    check_cuda(launch_fill_normal_float(b.as<float>(), std::size_t(n) * k, seed + 1, stream.get()), "fill b");
    c.poison(stream.get());
    check_cuda(launch_gemm_tf32(a.as<float>(), b.as<float>(), c.as<float>(), m, n, k, stream.get(), fault, tiling),
               "gemm launch");
    stream.synchronize("gemm");
    const auto a_host = a.download<float>(stream.get());
    const auto b_host = b.download<float>(stream.get());
    const auto c_host = c.download<float>(stream.get());
    const auto exact = kernels::gemm_reference(a_host, b_host, m, n, k);
    const auto tf32 = kernels::gemm_reference(rounded(a_host), rounded(b_host), m, n, k);
    Outcome outcome;
    outcome.error = kernels::relative_error(c_host, exact);
    outcome.tolerance = kernels::tolerance_from(kernels::relative_error(tf32, exact), 1e-5);
    outcome.unwritten = static_cast<std::size_t>(std::count_if(
        c_host.begin(), c_host.end(), [](float x) { return std::bit_cast<std::uint32_t>(x) == 0xFFFFFFFFu; }));
    return outcome;
}

struct Shape {
    int m, n, k;
};
constexpr Shape kShapes[] = {{256, 256, 512}, {200, 136, 260}, {129, 96, 1024}, {1, 1, 4}, {384, 520, 36}};

}  // namespace

TEST_CASE("both TF32 GEMM kernels match fp64 within the TF32 bound", "[gpu]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    if (gpu_tests::capability(*device) < 80) {
        WARN("skipped: TF32 tensor cores need sm_80 or newer");
        return;
    }
    std::vector<std::pair<GemmTiling, std::string>> paths = {{GemmTiling::block128x256_warps8, "mma.sync 128x256"},
                                                             {GemmTiling::block128x128_warps4, "mma.sync 128x128"}};
    if (std::string(gemm_tf32_path(device->major, device->minor)) == "wgmma")
        paths.push_back({GemmTiling::wgmma, "wgmma"});
    else if (gpu_tests::capability(*device) == 90)
        WARN("this build has no wgmma GEMM kernel: only the mma.sync paths are checked");
    std::uint64_t seed = 0x7f32;
    for (const auto& [tiling, name] : paths)
        for (const Shape& s : kShapes) {
            seed += 2;  // fresh inputs for every run
            const Outcome outcome = run_path(tiling, s.m, s.n, s.k, seed);
            INFO(name << " " << s.m << "x" << s.n << "x" << s.k << ": error " << outcome.error << ", bound "
                      << outcome.tolerance);
            CHECK(outcome.unwritten == 0);
            CHECK(kernels::within_tolerance(outcome.error, outcome.tolerance));
        }
}

TEST_CASE("the wgmma GEMM kernel fails on a planted wrong result and refuses other GPUs", "[gpu]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    if (std::string(gemm_tf32_path(device->major, device->minor)) != "wgmma") {
        if (gpu_tests::capability(*device) < 80) return;
        DeviceBuffer a(64 * 4 * 4), b(64 * 4 * 4), c(64 * 64 * 4);
        CHECK(launch_gemm_tf32(a.as<float>(), b.as<float>(), c.as<float>(), 64, 64, 4, nullptr, FaultKind::none,
                               GemmTiling::wgmma) == cudaErrorNotSupported);
        return;
    }
    const Outcome outcome = run_path(GemmTiling::wgmma, 256, 256, 512, 99, FaultKind::wrong_result);
    CHECK_FALSE(kernels::within_tolerance(outcome.error, outcome.tolerance));
}
