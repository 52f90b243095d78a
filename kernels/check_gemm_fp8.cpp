// The device half of gemm.fp8 and gemm.fp8.wgmma: the host half
// (gemm_fp8_host.h) has drawn the inputs and computed the references; this
// uploads them, runs the kernel with its output poisoned, and judges what
// comes back.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "checks.h"
#include "cuda_support.h"

namespace provision::kernels::detail {
namespace {

const char* kernel_name(Fp8GemmKernel kernel) { return kernel == Fp8GemmKernel::wgmma ? "wgmma" : "mma.sync"; }

cudaError_t launch(Fp8GemmKernel kernel, Fp8Format a_format, Fp8Format b_format, const DeviceBuffer& a,
                   const DeviceBuffer& b, const DeviceBuffer& c, int m, int n, int k, float scale,
                   cudaStream_t stream, FaultKind fault) {
    const auto* a_codes = a.as<const std::uint8_t>();
    const auto* b_codes = b.as<const std::uint8_t>();
    if (kernel == Fp8GemmKernel::mma_sync)
        return launch_gemm_fp8(a_format, b_format, a_codes, b_codes, c.as<float>(), m, n, k, scale, stream, fault);
#if PROVISION_HAVE_WGMMA
    return launch_gemm_fp8_wgmma(a_format, b_format, a_codes, b_codes, c.as<float>(), m, n, k, scale, stream, fault);
#else
    return cudaErrorNotSupported;
#endif
}

// One set of device buffers, large enough for every quick problem.
struct QuickBuffers {
    explicit QuickBuffers(const Fp8GemmInputs& inputs)
        : a(largest(inputs, [](const Fp8GemmProblem& p) { return p.a.size(); })),
          b(largest(inputs, [](const Fp8GemmProblem& p) { return p.b.size(); })),
          c(largest(inputs, [](const Fp8GemmProblem& p) { return p.exact.size() * sizeof(float); })) {}

    template <typename Size>
    static std::size_t largest(const Fp8GemmInputs& inputs, Size size) {
        std::size_t bytes = 16;
        for (const auto& problem : inputs.problems) bytes = std::max(bytes, size(problem));
        return bytes;
    }
    DeviceBuffer a, b, c;
};

Fp8GemmVerdict run_problem(const CheckContext& context, const Fp8GemmProblem& problem, Fp8GemmKernel kernel,
                           QuickBuffers& buffers, const Stream& stream, double& kernel_ms) {
    buffers.a.upload(problem.a, stream.get());
    buffers.b.upload(problem.b, stream.get());
    buffers.c.poison(stream.get());
    EventTimer timer;
    timer.start(stream.get());
    check_cuda(launch(kernel, problem.a_format, problem.b_format, buffers.a, buffers.b, buffers.c, problem.m,
                      problem.n, problem.k, problem.scale, stream.get(), context.fault),
               "fp8 gemm kernel launch");
    timer.stop(stream.get());
    stream.synchronize("fp8 gemm kernel");
    kernel_ms += timer.elapsed_ms();
    std::vector<float> output(problem.exact.size());
    buffers.c.copy_to_host(output.data(), output.size() * sizeof(float), 0, stream.get());
    return judge_gemm_fp8(problem, output);
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
        check_cuda(launch(kernel, kFormat, kFormat, a, b, c, kSize, kSize, kSize, scale, stream.get(), context.fault),
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
    std::vector<Fp8GemmVerdict> verdicts;
    {
        QuickBuffers buffers(inputs);
        for (const auto& problem : inputs.problems)
            verdicts.push_back(run_problem(context, problem, kernel, buffers, stream, result.ms));
    }
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
