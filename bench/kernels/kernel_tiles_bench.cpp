// Times the kernels' tile shapes against each other at the full-mode shapes
// on the first GPU, checking each one's output: a tuning aid for choosing
// the `automatic` tiles, not a test.  Prints a Markdown table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_support.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "tolerance.h"

using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

constexpr int kWarmups = 2, kRuns = 10;

template <typename Launch>
double median_ms(const Stream& stream, Launch launch) {
    for (int i = 0; i < kWarmups; ++i) check_cuda(launch(), "launch");
    std::vector<double> times;
    EventTimer timer;
    for (int i = 0; i < kRuns; ++i) {
        timer.start(stream.get());
        check_cuda(launch(), "launch");
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

void attention(const Stream& stream, int major, ElementType type, bool causal) {
    const AttentionProblem problem{4, 16, 4096, 128, causal, 1.f / std::sqrt(128.f)};
    const std::size_t n = std::size_t(4) * 16 * 4096 * 128;
    DeviceBuffer q(n * 2), k(n * 2), v(n * 2), o(n * 2), reference(std::size_t(4096) * 128 * 4);
    check_cuda(launch_fill_normal(type, q.get(), n, 1, stream.get()), "fill");
    check_cuda(launch_fill_normal(type, k.get(), n, 2, stream.get()), "fill");
    check_cuda(launch_fill_normal(type, v.get(), n, 3, stream.get()), "fill");
    check_cuda(launch_attention_reference(type, false, q.get(), k.get(), v.get(), reference.as<float>(), problem, 1,
                                          stream.get()),
               "reference");
    const auto expected = reference.download<float>(stream.get());
    const std::pair<AttentionTiling, const char*> tilings[] = {
        {AttentionTiling::warps4, "4 warps"},
        {AttentionTiling::warps4_double_buffered, "4 warps, double-buffered"},
        {AttentionTiling::warps8, "8 warps"},
        {AttentionTiling::warps8_double_buffered, "8 warps, double-buffered"}};
    for (const auto& [tiling, name] : tilings) {
        auto launch = [&] {
            return launch_attention_mma(type, q.get(), k.get(), v.get(), o.get(), problem, major, stream.get(),
                                        FaultKind::none, tiling);
        };
        o.poison(stream.get());
        check_cuda(launch(), "attention");
        const auto bits = o.download<std::uint16_t>(stream.get());
        const auto unwritten = std::count(bits.begin(), bits.end(), kPoison16);
        std::vector<float> head(expected.size());
        for (std::size_t i = 0; i < head.size(); ++i) head[i] = bits_to_float(type, bits[i]);
        const double ms = median_ms(stream, launch);
        const double flops = 4.0 * 4 * 16 * 4096.0 * 4096 * 128 * (causal ? 0.5 : 1.0);
        fmt::print("| attention.{} | b4 h16 s4096 d128{} | {} | {:.3f} | {:.1f} | {:.2e} | {} |\n", element_type_name(type),
                   causal ? " causal" : "", name, ms, flops / ms / 1e9, relative_error(head, expected), unwritten);
    }
}

void gemm(const Stream& stream) {
    const int size = 8192;
    const std::size_t n = std::size_t(size) * size;
    DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
    check_cuda(launch_fill_normal_float(a.as<float>(), n, 4, stream.get()), "fill");
    check_cuda(launch_fill_normal_float(b.as<float>(), n, 5, stream.get()), "fill");
    const std::pair<GemmTiling, const char*> tilings[] = {{GemmTiling::block128x128_warps8, "128x128, 8 warps"},
                                                          {GemmTiling::block128x128_warps4, "128x128, 4 warps"},
                                                          {GemmTiling::block128x256_warps8, "128x256, 8 warps"}};
    std::vector<float> first;
    for (const auto& [tiling, name] : tilings) {
        auto launch = [&] {
            return launch_gemm_tf32(a.as<float>(), b.as<float>(), c.as<float>(), size, size, size, stream.get(),
                                    FaultKind::none, tiling);
        };
        c.poison(stream.get());
        check_cuda(launch(), "gemm");
        auto result = c.download<float>(stream.get());
        // Every tiling adds each element's products in the same order.
        const double difference = first.empty() ? 0.0 : relative_error(result, first);
        if (first.empty()) first = std::move(result);
        const double ms = median_ms(stream, launch);
        fmt::print("| gemm.tf32 | 8192x8192x8192 | {} | {:.3f} | {:.1f} | {:.2e} (vs the first) | - |\n", name, ms,
                   2.0 * size * size * double(size) / ms / 1e9, difference);
    }
}

}  // namespace

int main() {
    try {
        int major = 0, minor = 0;
        check_cuda(cudaSetDevice(0), "cudaSetDevice");
        check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "cudaDeviceGetAttribute");
        check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), "cudaDeviceGetAttribute");
        cudaDeviceProp properties{};
        check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
        fmt::print("{} (sm_{}{}), median of {} runs after {} warm-ups\n\n", properties.name, major, minor, kRuns, kWarmups);
        fmt::print("| kernel | shape | tiles | ms | TFLOP/s | error | unwritten |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        Stream stream;
        for (ElementType type : {ElementType::fp16, ElementType::bf16})
            for (bool causal : {false, true})
                if (type == ElementType::fp16 || major >= 8) attention(stream, major, type, causal);
        if (major >= 8) gemm(stream);
    } catch (const CudaFailure& failure) {
        fmt::print(stderr, "kernel_tiles_bench: {}\n", describe_cuda_failure(failure, 0));
        return 1;
    }
    return 0;
}
