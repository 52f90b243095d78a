#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "checks.h"
#include "cuda_support.h"
#include "host_inputs.h"
#include "kernel_loading.h"
#include "reference_cpu.h"
#include "tolerance.h"

namespace provision::kernels::detail {
namespace {

// The floor of the tolerance rule (tolerance.h): covers the kernel's fp32
// accumulation, far below TF32's rounding (its unit roundoff is 2^-11,
// about 4.9e-4).
constexpr double kGemmFloor = 1e-5;

struct GemmShape {
    int m, n, k;
};

std::vector<float> rounded_to_tf32(std::vector<float> values) {
    std::transform(values.begin(), values.end(), values.begin(), round_to_tf32);
    return values;
}

struct GemmVerdict {
    std::string shape;
    double error = 0;
    double tolerance = 0;
    std::string problem;
    double ratio() const { return tolerance > 0 ? error / tolerance : INFINITY; }
};

std::size_t count_unwritten(const std::vector<float>& c) {
    return static_cast<std::size_t>(
        std::count_if(c.begin(), c.end(), [](float x) { return std::bit_cast<std::uint32_t>(x) == 0xFFFFFFFFu; }));
}

std::size_t count_nan(const std::vector<float>& c) {
    return static_cast<std::size_t>(std::count_if(c.begin(), c.end(), [](float x) { return std::isnan(x); }));
}

void finish(GemmVerdict& verdict, std::size_t unwritten, std::size_t nan, std::size_t total) {
    if (unwritten > 0)
        verdict.problem = fmt::format("{} of {} output elements were never written", unwritten, total);
    else if (nan > 0)
        verdict.problem = fmt::format("{} output elements are NaN", nan);
    else if (!within_tolerance(verdict.error, verdict.tolerance))
        verdict.problem = fmt::format("error {:.3e} > tolerance {:.3e}", verdict.error, verdict.tolerance);
}

std::uint64_t seed_for(std::uint64_t seed, int shape) {
    return seed * 0x100000001B3ull + static_cast<std::uint64_t>(shape) * 16;
}

struct GemmBuffers {
    explicit GemmBuffers(const GemmShape& s)
        : a(static_cast<std::size_t>(s.m) * s.k * 4), b(static_cast<std::size_t>(s.n) * s.k * 4),
          c(static_cast<std::size_t>(s.m) * s.n * 4) {}
    DeviceBuffer a, b, c;
};

// The benchmark's large operands are drawn on the GPU (seconds on the host).
void prepare(const GemmBuffers& buffers, const GemmShape& s, std::uint64_t seed, int index, cudaStream_t stream) {
    const std::uint64_t base = seed_for(seed, index);
    check_cuda(launch_fill_normal_float(buffers.a.as<float>(), static_cast<std::size_t>(s.m) * s.k, base, stream), "fill a");
    check_cuda(launch_fill_normal_float(buffers.b.as<float>(), static_cast<std::size_t>(s.n) * s.k, base + 1, stream),
               "fill b");
    check_cuda(cudaMemsetAsync(buffers.c.get(), 0xFF, buffers.c.bytes(), stream), "cudaMemsetAsync");
}

// One quick shape's operands and output, in an arena holding every shape.
struct PlacedShape {
    static std::size_t bytes_for(const GemmShapeInputs& s) {
        return DeviceArena::footprint(s.a.size() * 4) + DeviceArena::footprint(s.b.size() * 4) +
               DeviceArena::footprint(static_cast<std::size_t>(s.m) * s.n * 4);
    }
    PlacedShape(const GemmShapeInputs& s, DeviceArena& arena)
        : a(arena.take(s.a.size() * 4)), b(arena.take(s.b.size() * 4)),
          c(arena.take(static_cast<std::size_t>(s.m) * s.n * 4)) {}
    DeviceSpan a, b, c;
};

// One shape's kernel on the stream (or, while kernels are loading, its load).
void launch_shape(const CheckContext& context, const GemmShapeInputs& s, const PlacedShape& placed,
                  const Stream& stream) {
    check_cuda(launch_gemm_tf32(placed.a.as<float>(), placed.b.as<float>(), placed.c.as<float>(), s.m, s.n, s.k,
                                stream.get(), context.fault),
               "gemm kernel launch");
}

// Puts one shape's uploads and its kernel (between `timer`'s events) on the
// stream; nothing waits for them here.
void enqueue_shape(const CheckContext& context, const GemmShapeInputs& s, const PlacedShape& placed,
                   const Stream& stream, EventTimer& timer) {
    placed.a.upload(s.a, stream.get());
    placed.b.upload(s.b, stream.get());
    placed.c.poison(stream.get());
    timer.start(stream.get());
    launch_shape(context, s, placed, stream);
    timer.stop(stream.get());
}

GemmVerdict judge_shape(const GemmShapeInputs& s, const PlacedShape& placed, const Stream& stream) {
    const auto c = placed.c.download<float>(stream.get());
    GemmVerdict verdict;
    verdict.shape = fmt::format("{}x{}x{}", s.m, s.n, s.k);
    verdict.error = relative_error(c, s.exact);
    verdict.tolerance = tolerance_from(relative_error(s.tf32, s.exact), kGemmFloor);
    finish(verdict, count_unwritten(c), count_nan(c), c.size());
    return verdict;
}

// Every quick shape's work first, then one wait, then the judgements.
std::vector<GemmVerdict> run_quick_shapes(const CheckContext& context, const GemmInputs& inputs, const Stream& stream,
                                          double& ms) {
    std::size_t bytes = 0;
    for (const auto& shape : inputs.shapes) bytes += PlacedShape::bytes_for(shape);
    DeviceArena memory(bytes);
    std::vector<PlacedShape> placed;
    for (const auto& shape : inputs.shapes) placed.emplace_back(shape, memory);
    {
        const LoadingKernels loading;  // before any is queued (kernel_loading.h)
        for (std::size_t i = 0; i < placed.size(); ++i) launch_shape(context, inputs.shapes[i], placed[i], stream);
    }
    std::vector<std::unique_ptr<EventTimer>> timers;
    for (std::size_t i = 0; i < placed.size(); ++i) {
        timers.push_back(std::make_unique<EventTimer>());
        enqueue_shape(context, inputs.shapes[i], placed[i], stream, *timers.back());
    }
    stream.synchronize("gemm kernel");
    std::vector<GemmVerdict> verdicts;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        ms += timers[i]->elapsed_ms();
        verdicts.push_back(judge_shape(inputs.shapes[i], placed[i], stream));
    }
    return verdicts;
}

// Times 8192^3 and spot-checks elements of its result against fp64.
GemmVerdict benchmark(const CheckContext& context, const Stream& stream, double& median_ms, double& tflops) {
    constexpr int kWarmups = 2, kRuns = 10, kSamples = 64;
    const GemmShape s{8192, 8192, 8192};
    GemmBuffers buffers(s);
    prepare(buffers, s, context.seed, 99, stream.get());
    auto launch = [&] {
        check_cuda(launch_gemm_tf32(buffers.a.as<float>(), buffers.b.as<float>(), buffers.c.as<float>(), s.m, s.n, s.k,
                                    stream.get(), context.fault),
                   "gemm kernel launch");
    };
    for (int i = 0; i < kWarmups; ++i) launch();
    std::vector<double> times;
    EventTimer timer;
    for (int i = 0; i < kRuns; ++i) {
        timer.start(stream.get());
        launch();
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    stream.synchronize("gemm kernel");
    std::sort(times.begin(), times.end());
    median_ms = times[times.size() / 2];
    tflops = 2.0 * s.m * s.n * static_cast<double>(s.k) / (median_ms * 1e-3) / 1e12;

    const auto c = buffers.c.download<float>(stream.get());
    std::mt19937_64 pick(context.seed);
    std::vector<float> sampled, a_row(s.k), b_row(s.k);
    std::vector<double> exact, tf32;
    sampled.push_back(c[0]);  // where a planted wrong result lands
    for (int i = 0; i < kSamples; ++i) {
        const int row = i == 0 ? 0 : static_cast<int>(pick() % s.m);
        const int col = i == 0 ? 0 : static_cast<int>(pick() % s.n);
        if (i > 0) sampled.push_back(c[static_cast<std::size_t>(row) * s.n + col]);
        buffers.a.copy_to_host(a_row.data(), s.k * 4, static_cast<std::size_t>(row) * s.k * 4, stream.get());
        buffers.b.copy_to_host(b_row.data(), s.k * 4, static_cast<std::size_t>(col) * s.k * 4, stream.get());
        exact.push_back(gemm_reference_element(a_row.data(), b_row.data(), s.k));
        const auto a_t = rounded_to_tf32(a_row), b_t = rounded_to_tf32(b_row);
        tf32.push_back(gemm_reference_element(a_t.data(), b_t.data(), s.k));
    }
    GemmVerdict verdict;
    verdict.shape = fmt::format("{}x{}x{} ({} sampled elements)", s.m, s.n, s.k, kSamples);
    verdict.error = relative_error(sampled, exact);
    verdict.tolerance = tolerance_from(relative_error(tf32, exact), kGemmFloor);
    finish(verdict, count_unwritten(c), count_nan(c), c.size());
    return verdict;
}

}  // namespace

GemmInputs prepare_gemm_tf32_inputs(std::uint64_t seed) {
    GemmInputs inputs;
    inputs.seed = seed;
    const std::vector<GemmShape> shapes = {{256, 256, 512}, {200, 136, 260}, {129, 96, 1024}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const GemmShape& s = shapes[i];
        GemmShapeInputs shape;
        shape.m = s.m;
        shape.n = s.n;
        shape.k = s.k;
        const std::uint64_t base = seed_for(seed, static_cast<int>(i));
        shape.a = normal_floats(static_cast<std::size_t>(s.m) * s.k, base);
        shape.b = normal_floats(static_cast<std::size_t>(s.n) * s.k, base + 1);
        shape.exact = gemm_reference(shape.a, shape.b, s.m, s.n, s.k);
        shape.tf32 = gemm_reference(rounded_to_tf32(shape.a), rounded_to_tf32(shape.b), s.m, s.n, s.k);
        inputs.shapes.push_back(std::move(shape));
    }
    return inputs;
}

CheckResult run_gemm_tf32_check(const CheckContext& context, const GemmInputs& inputs) {
    CheckResult result;
    Stream stream;
    std::vector<GemmVerdict> verdicts = run_quick_shapes(context, inputs, stream, result.ms);
    std::string benchmark_note;
    if (context.full) {
        double median_ms = 0;
        verdicts.push_back(benchmark(context, stream, median_ms, result.tflops));
        benchmark_note = fmt::format("; 8192x8192x8192: {:.3f} ms, {:.1f} TFLOP/s", median_ms, result.tflops);
    }
    const auto failed =
        std::find_if(verdicts.begin(), verdicts.end(), [](const GemmVerdict& v) { return !v.problem.empty(); });
    const GemmVerdict& shown =
        failed != verdicts.end()
            ? *failed
            : *std::max_element(verdicts.begin(), verdicts.end(),
                                [](const GemmVerdict& a, const GemmVerdict& b) { return a.ratio() < b.ratio(); });
    result.max_rel_error = shown.error;
    result.tolerance = shown.tolerance;
    if (failed != verdicts.end()) {
        result.status = CheckStatus::failed;
        result.detail = fmt::format("{} kernel, {}: {} (seed {})", gemm_tf32_path(context.major, context.minor),
                                    shown.shape, shown.problem, context.seed);
    } else {
        result.status = CheckStatus::passed;
        result.detail = fmt::format("{} kernel, {} shapes; closest to the bound: {}{}",
                                    gemm_tf32_path(context.major, context.minor), verdicts.size(), shown.shape,
                                    benchmark_note);
    }
    return result;
}

}  // namespace provision::kernels::detail
