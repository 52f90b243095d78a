// The launchers' loading mode (kernels/kernel_loading.h): while a
// LoadingKernels lives on the thread each launcher loads its kernel and
// launches nothing, so an output poisoned before stays poisoned; without it
// the same call writes the output.  The wgmma launchers are tried where the
// build has their sm_90a code.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "cuda_test_support.h"
#include "kernel_launchers.h"
#include "kernel_loading.h"

using namespace provision;
using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

// Whether any byte of `output` changed from the poison after `launch`.
bool launch_writes(DeviceBuffer& output, const Stream& stream, const std::function<cudaError_t()>& launch) {
    output.poison(stream.get());
    stream.synchronize("poison");
    check_cuda(launch(), "launch");
    stream.synchronize("launch");
    const auto bytes = output.download<std::uint8_t>(stream.get());
    return std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0xFF; });
}

struct Launcher {
    std::string name;
    int min_capability;
    std::function<cudaError_t(cudaStream_t)> launch;
};

}  // namespace

TEST_CASE("while loading kernels the launchers load and launch nothing; otherwise they run", "[gpu]") {
    const auto device = gpu_tests::current_device_or_skip();
    if (!device) return;
    constexpr int kM = 128, kN = 128, kK = 256;
    const AttentionProblem problem{1, 2, 128, 64, true, 0.125f};
    const std::size_t elements = std::size_t(problem.batch) * problem.heads * problem.seq_len * problem.head_dim;
    Stream stream;
    DeviceBuffer a(std::size_t(kM) * kK * 4), b(std::size_t(kN) * kK * 4), out(std::size_t(kM) * kN * 4);
    DeviceBuffer q(elements * 2), k(elements * 2), v(elements * 2);
    check_cuda(launch_fill_normal_float(a.as<float>(), std::size_t(kM) * kK, 1, stream.get()), "fill a");
    check_cuda(launch_fill_normal_float(b.as<float>(), std::size_t(kN) * kK, 2, stream.get()), "fill b");
    for (const DeviceBuffer* tensor : {&q, &k, &v})
        check_cuda(launch_fill_normal(ElementType::bf16, tensor->get(), elements, 3, stream.get()), "fill q, k, v");
    const auto* codes_a = a.as<const std::uint8_t>();
    const auto* codes_b = b.as<const std::uint8_t>();
    const std::vector<Launcher> launchers{
        {"fill_normal", 0,
         [&](cudaStream_t s) { return launch_fill_normal_float(out.as<float>(), std::size_t(kM) * kN, 4, s); }},
        {"fill_fp8", 0,
         [&](cudaStream_t s) { return launch_fill_fp8(Fp8Format::e4m3, Fp8Spread::full_range, out.as<std::uint8_t>(), out.bytes(), 5, s); }},
        {"attention_reference", 80,
         [&](cudaStream_t s) {
             return launch_attention_reference(ElementType::bf16, false, q.get(), k.get(), v.get(), out.as<float>(),
                                               problem, 1, s);
         }},
        {"attention_mma", 80,
         [&](cudaStream_t s) {
             return launch_attention_mma(ElementType::bf16, q.get(), k.get(), v.get(), out.get(), problem,
                                         device->major, s, FaultKind::none);
         }},
        {"gemm_tf32 mma.sync", 80,
         [&](cudaStream_t s) {
             return launch_gemm_tf32(a.as<float>(), b.as<float>(), out.as<float>(), kM, kN, kK, s, FaultKind::none,
                                     GemmTiling::block128x128_warps8);
         }},
        {"gemm_fp8 mma.sync", 89,
         [&](cudaStream_t s) {
             return launch_gemm_fp8(Fp8Format::e4m3, Fp8Format::e5m2, codes_a, codes_b, out.as<float>(), kM, kN, kK,
                                    1.f, s, FaultKind::none);
         }},
        {"gemm_tf32 wgmma", 90,
         [&](cudaStream_t s) {
             return launch_gemm_tf32(a.as<float>(), b.as<float>(), out.as<float>(), kM, kN, kK, s, FaultKind::none,
                                     GemmTiling::wgmma);
         }},
        {"gemm_fp8 wgmma", 90,
         [&](cudaStream_t s) {
             return launch_gemm_fp8_wgmma(Fp8Format::e4m3, Fp8Format::e4m3, codes_a, codes_b, out.as<float>(), kM, kN,
                                          kK, 1.f, s, FaultKind::none);
         }},
        {"attention wgmma", 90,
         [&](cudaStream_t s) {
             return launch_attention_bf16_wgmma(q.get(), k.get(), v.get(), out.get(), problem, s, FaultKind::none);
         }},
    };
    for (const Launcher& launcher : launchers) {
        CAPTURE(launcher.name);
        if (gpu_tests::capability(*device) < launcher.min_capability ||
            (launcher.min_capability == 90 && gpu_tests::capability(*device) != 90))
            continue;
        {
            const LoadingKernels loading;
            if (launcher.min_capability == 90 && launcher.launch(stream.get()) == cudaErrorNotSupported) {
                WARN(launcher.name << " skipped: this build has no sm_90a code");
                continue;
            }
            CHECK_FALSE(launch_writes(out, stream, [&] { return launcher.launch(stream.get()); }));
        }
        CHECK_FALSE(loading_kernels());  // the scope ended
        CHECK(launch_writes(out, stream, [&] { return launcher.launch(stream.get()); }));
    }
}
