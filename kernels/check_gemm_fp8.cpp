// The device half of gemm.fp8 and gemm.fp8.wgmma: the host half
// (gemm_fp8_host.h) has drawn the inputs and computed the references; this
// uploads them, runs the kernel with its output poisoned, and judges what
// comes back.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "checks.h"
#include "cuda_support.h"
#include "kernel_loading.h"

namespace provision::kernels::detail {
namespace {

const char* kernel_name(Fp8GemmKernel kernel) { return kernel == Fp8GemmKernel::wgmma ? "wgmma" : "mma.sync"; }

cudaError_t launch(Fp8GemmKernel kernel, Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a,
                   const std::uint8_t* b, float* c, int m, int n, int k, float scale, cudaStream_t stream,
                   FaultKind fault) {
    if (kernel == Fp8GemmKernel::mma_sync) return launch_gemm_fp8(a_format, b_format, a, b, c, m, n, k, scale, stream, fault);
#if PROVISION_HAVE_WGMMA
    return launch_gemm_fp8_wgmma(a_format, b_format, a, b, c, m, n, k, scale, stream, fault);
#else
    return cudaErrorNotSupported;
#endif
}

// Runs every quick problem in one batch: the operands in one arena, the
// outputs side by side in another, the uploads and kernels queued on one
// stream, then one wait and one download.  Run one by one, each problem's
// wait and download met the other checks' copies twelve times over.
std::vector<Fp8GemmVerdict> run_quick_problems(const CheckContext& context, const Fp8GemmInputs& inputs,
                                               Fp8GemmKernel kernel, const Stream& stream, double& kernel_ms) {
    std::size_t operand_bytes = 0, output_bytes = 0;
    for (const auto& problem : inputs.problems) {
        operand_bytes += DeviceArena::footprint(problem.a.size()) + DeviceArena::footprint(problem.b.size());
        output_bytes += DeviceArena::footprint(problem.exact.size() * sizeof(float));
    }
    DeviceArena operands(operand_bytes), outputs(output_bytes);
    const DeviceSpan all_outputs = outputs.take(output_bytes);
    struct Placed {
        DeviceSpan a, b;
        std::size_t output_at;  // in floats from the outputs' start
    };
    std::vector<Placed> placed;
    std::size_t next_output = 0;
    for (const auto& problem : inputs.problems) {
        const DeviceSpan a = operands.take(problem.a.size()), b = operands.take(problem.b.size());
        placed.push_back({a, b, next_output / sizeof(float)});
        next_output += DeviceArena::footprint(problem.exact.size() * sizeof(float));
    }
    const auto launch_problem = [&](std::size_t i) {
        const auto& problem = inputs.problems[i];
        check_cuda(launch(kernel, problem.a_format, problem.b_format, placed[i].a.as<const std::uint8_t>(),
                          placed[i].b.as<const std::uint8_t>(), all_outputs.as<float>() + placed[i].output_at,
                          problem.m, problem.n, problem.k, problem.scale, stream.get(), context.fault),
                   "fp8 gemm kernel launch");
    };
    {
        const LoadingKernels loading;  // before any is queued (kernel_loading.h)
        for (std::size_t i = 0; i < placed.size(); ++i) launch_problem(i);
    }
    all_outputs.poison(stream.get());  // an element a kernel never writes stays NaN
    std::vector<std::unique_ptr<EventTimer>> timers;
    for (std::size_t i = 0; i < placed.size(); ++i) {
        placed[i].a.upload(inputs.problems[i].a, stream.get());
        placed[i].b.upload(inputs.problems[i].b, stream.get());
        timers.push_back(std::make_unique<EventTimer>());
        timers.back()->start(stream.get());
        launch_problem(i);
        timers.back()->stop(stream.get());
    }
    stream.synchronize("fp8 gemm kernel");
    for (const auto& timer : timers) kernel_ms += timer->elapsed_ms();
    const auto host = all_outputs.download<float>(stream.get());
    std::vector<Fp8GemmVerdict> verdicts;
    for (std::size_t i = 0; i < inputs.problems.size(); ++i) {
        const auto& problem = inputs.problems[i];
        verdicts.push_back(judge_gemm_fp8(problem, std::span(host).subspan(placed[i].output_at, problem.exact.size())));
    }
    return verdicts;
}

struct Throughput {
    double median_ms = 0;
    double tflops = 0;
};

// Times e4m3 x e4m3 at 8192^3 (the shape bench/kernels/torch_peers.py gives
// torch._scaled_mm) on inputs drawn on the GPU, then checks every element
// written and samples against the references.
Fp8GemmVerdict benchmark(const CheckContext& context, std::uint64_t seed, Fp8GemmKernel kernel, const Stream& stream,
                         Throughput& throughput) {
    constexpr int kSize = 8192, kWarmups = 2, kRuns = 10, kSamples = 64;
    constexpr Fp8Format kFormat = Fp8Format::e4m3;
    const std::size_t operand = std::size_t(kSize) * kSize;
    DeviceBuffer a(operand), b(operand), c(operand * sizeof(float));
    check_cuda(launch_fill_fp8(kFormat, Fp8Spread::moderate, a.as<std::uint8_t>(), operand, random_bits(seed, 5001),
                               stream.get()),
               "fill a");
    check_cuda(launch_fill_fp8(kFormat, Fp8Spread::moderate, b.as<std::uint8_t>(), operand, random_bits(seed, 5002),
                               stream.get()),
               "fill b");
    c.poison(stream.get());
    const float scale = 0.75f;
    auto run = [&] {
        check_cuda(launch(kernel, kFormat, kFormat, a.as<const std::uint8_t>(), b.as<const std::uint8_t>(), c.as<float>(),
                          kSize, kSize, kSize, scale, stream.get(), context.fault),
                   "fp8 gemm kernel launch");
    };
    for (int i = 0; i < kWarmups; ++i) run();
    std::vector<double> times;
    EventTimer timer;
    for (int i = 0; i < kRuns; ++i) {
        timer.start(stream.get());
        run();
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    stream.synchronize("fp8 gemm kernel");
    std::sort(times.begin(), times.end());
    throughput.median_ms = times[times.size() / 2];
    throughput.tflops = 2.0 * kSize * kSize * static_cast<double>(kSize) / (throughput.median_ms * 1e-3) / 1e12;

    const auto output = c.download<float>(stream.get());
    std::mt19937_64 pick(seed);
    std::vector<std::size_t> samples;
    std::vector<double> exact;
    std::vector<float> modelled;
    std::vector<std::uint8_t> a_row(kSize), b_row(kSize);
    for (int i = 0; i < kSamples; ++i) {
        const int row = i == 0 ? 0 : static_cast<int>(pick() % kSize);  // row 0: where a planted wrong result lands
        const int col = i == 0 ? 0 : static_cast<int>(pick() % kSize);
        a.copy_to_host(a_row.data(), kSize, std::size_t(row) * kSize, stream.get());
        b.copy_to_host(b_row.data(), kSize, std::size_t(col) * kSize, stream.get());
        samples.push_back(std::size_t(row) * kSize + col);
        exact.push_back(exact_fp8_dot(kFormat, a_row.data(), kFormat, b_row.data(), kSize) * static_cast<double>(scale));
        modelled.push_back(modelled_fp8_dot(kFormat, a_row.data(), kFormat, b_row.data(), kSize) * scale);
    }
    return judge_gemm_fp8_samples(fmt::format("e4m3 x e4m3, {0}x{0}x{0} ({1} sampled elements)", kSize, kSamples),
                                  output, samples, exact, modelled);
}

}  // namespace

CheckResult run_gemm_fp8_device(const CheckContext& context, const Fp8GemmInputs& inputs, Fp8GemmKernel kernel) {
    CheckResult result;
    Stream stream;
    std::vector<Fp8GemmVerdict> verdicts = run_quick_problems(context, inputs, kernel, stream, result.ms);
    std::string benchmark_note;
    if (inputs.full) {
        Throughput throughput;
        verdicts.push_back(benchmark(context, inputs.seed, kernel, stream, throughput));
        result.tflops = throughput.tflops;
        benchmark_note = fmt::format("; e4m3 8192x8192x8192: {:.3f} ms, {:.1f} TFLOP/s", throughput.median_ms,
                                     throughput.tflops);
    }
    if (verdicts.empty()) throw std::logic_error("the fp8 GEMM check was given no problem");
    const auto failed =
        std::find_if(verdicts.begin(), verdicts.end(), [](const Fp8GemmVerdict& v) { return !v.problem.empty(); });
    const Fp8GemmVerdict& shown =
        failed != verdicts.end()
            ? *failed
            : *std::max_element(verdicts.begin(), verdicts.end(),
                                [](const Fp8GemmVerdict& a, const Fp8GemmVerdict& b) { return a.ratio() < b.ratio(); });
    result.max_rel_error = shown.error;
    result.tolerance = shown.tolerance;
    if (failed != verdicts.end()) {
        result.status = CheckStatus::failed;
        result.detail = fmt::format("{} kernel, {}: {} (seed {})", kernel_name(kernel), shown.shape, shown.problem,
                                    inputs.seed);
    } else {
        result.status = CheckStatus::passed;
        result.detail = fmt::format("{} kernel, e4m3 and e5m2, {} problems; closest to the bound: {}{}",
                                    kernel_name(kernel), verdicts.size(), shown.shape, benchmark_note);
    }
    return result;
}

}  // namespace provision::kernels::detail
