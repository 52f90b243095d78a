// Throughput of the validation kernels at the shapes real workloads run:
// the fused attention forward through mma.sync (fp16, bf16) and through
// Hopper's wgmma (bf16), causal and not, the TF32 GEMM and the fp8 GEMM
// (e4m3, mma.sync and wgmma).  Each shape is
// checked once against the reference before it is timed, then timed with
// CUDA events after warm-up, rotating over enough input sets that the L2
// cannot hold them.  One JSON object per line on stdout (gpu-bench reads
// them); progress on stderr.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "gemm_fp8_host.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "tolerance.h"

using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

struct Settings {
    int warmup = 3;
    int runs = 20;
    int batch = 4;
    int heads = 16;
    std::vector<int> seq_lens{2048, 4096, 16384};
    std::vector<int> head_dims{64, 128};
    std::vector<int> gemm_sizes{4096, 8192};
    std::vector<std::string> parts{"attention", "gemm", "fp8"};

    bool wants(const std::string& part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
};

struct Device {
    int index = 0;
    int major = 0;
    int minor = 0;
    std::size_t l2_bytes = 0;
};

struct Timing {
    double median_ms = 0;
    double min_ms = 0;
    double max_ms = 0;
};

// Median over `runs` launches after `warmup`, launch i using input set
// i % sets, each launch between its own pair of events.
Timing time_launches(const Stream& stream, const Settings& settings, int sets,
                     const std::function<cudaError_t(int set)>& launch) {
    for (int i = 0; i < settings.warmup; ++i) check_cuda(launch(i % sets), "warm-up launch");
    stream.synchronize("warm-up");
    std::vector<double> times;
    EventTimer timer;
    for (int i = 0; i < settings.runs; ++i) {
        timer.start(stream.get());
        check_cuda(launch(i % sets), "timed launch");
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    std::sort(times.begin(), times.end());
    return {times[times.size() / 2], times.front(), times.back()};
}

// Enough sets of `set_bytes` to exceed four times the L2, at least two,
// within a quarter of the free device memory.
int input_sets(const Device& device, std::size_t set_bytes) {
    std::size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const std::size_t wanted = (4 * device.l2_bytes + set_bytes - 1) / set_bytes;
    const std::size_t affordable = std::max<std::size_t>(1, free_bytes / 4 / set_bytes);
    return static_cast<int>(std::min(std::clamp<std::size_t>(wanted, 2, 16), affordable));
}

std::string json_number(double value) { return std::isfinite(value) ? fmt::format("{:.6g}", value) : "null"; }

enum class AttentionPath { mma_sync, wgmma };

const char* path_name(AttentionPath path) { return path == AttentionPath::wgmma ? "wgmma" : "mma.sync"; }

void bench_attention(const Stream& stream, const Device& device, const Settings& settings, AttentionPath path,
                     ElementType type, int seq_len, int head_dim, bool causal) {
    const AttentionProblem problem{settings.batch, settings.heads, seq_len, head_dim, causal,
                                   1.f / std::sqrt(static_cast<float>(head_dim))};
    const std::size_t elements = std::size_t(problem.batch) * problem.heads * seq_len * head_dim;
    const std::size_t tensor_bytes = elements * 2;
    const int sets = input_sets(device, 4 * tensor_bytes);
    struct InputSet {
        std::unique_ptr<DeviceBuffer> q, k, v, o;
    };
    std::vector<InputSet> inputs(sets);
    for (int s = 0; s < sets; ++s) {
        auto& set = inputs[s];
        set.q = std::make_unique<DeviceBuffer>(tensor_bytes);
        set.k = std::make_unique<DeviceBuffer>(tensor_bytes);
        set.v = std::make_unique<DeviceBuffer>(tensor_bytes);
        set.o = std::make_unique<DeviceBuffer>(tensor_bytes);
        const std::uint64_t seed = 1000 + 10 * s;
        check_cuda(launch_fill_normal(type, set.q->get(), elements, seed + 1, stream.get()), "fill q");
        check_cuda(launch_fill_normal(type, set.k->get(), elements, seed + 2, stream.get()), "fill k");
        check_cuda(launch_fill_normal(type, set.v->get(), elements, seed + 3, stream.get()), "fill v");
    }
    auto launch = [&](int s) -> cudaError_t {
        const auto& set = inputs[s];
        if (path == AttentionPath::wgmma)
            return launch_attention_bf16_wgmma(set.q->get(), set.k->get(), set.v->get(), set.o->get(), problem,
                                               stream.get(), FaultKind::none);
        return launch_attention_mma(type, set.q->get(), set.k->get(), set.v->get(), set.o->get(), problem,
                                    device.major, stream.get(), FaultKind::none);
    };

    // One checked run first: every element written, the first (batch, head)
    // pair against the fp32 reference.
    inputs[0].o->poison(stream.get());
    check_cuda(launch(0), fmt::format("attention {} launch", path_name(path)).c_str());
    const auto bits = inputs[0].o->download<std::uint16_t>(stream.get());
    const auto unwritten = std::count(bits.begin(), bits.end(), kPoison16);
    DeviceBuffer reference(std::size_t(seq_len) * head_dim * sizeof(float));
    check_cuda(launch_attention_reference(type, false, inputs[0].q->get(), inputs[0].k->get(), inputs[0].v->get(),
                                          reference.as<float>(), problem, 1, stream.get()),
               "reference launch");
    const auto expected = reference.download<float>(stream.get());
    std::vector<float> first_pair(expected.size());
    for (std::size_t i = 0; i < first_pair.size(); ++i) first_pair[i] = bits_to_float(type, bits[i]);
    const double error = relative_error(first_pair, expected);

    const Timing timing = time_launches(stream, settings, sets, launch);
    const double flops = 4.0 * problem.batch * problem.heads * double(seq_len) * seq_len * head_dim * (causal ? 0.5 : 1.0);
    const double tflops = flops / (timing.median_ms * 1e-3) / 1e12;
    fmt::print("{{\"bench\": \"attention\", \"path\": \"{}\", \"dtype\": \"{}\", \"batch\": {}, \"heads\": {}, "
               "\"seq_len\": {}, \"head_dim\": {}, \"causal\": {}, \"median_ms\": {}, \"min_ms\": {}, \"max_ms\": {}, "
               "\"tflops\": {}, \"max_rel_error\": {}, \"unwritten\": {}, \"input_sets\": {}, \"runs\": {}}}\n",
               path_name(path), element_type_name(type), problem.batch, problem.heads, seq_len, head_dim,
               causal ? "true" : "false", json_number(timing.median_ms), json_number(timing.min_ms),
               json_number(timing.max_ms), json_number(tflops), json_number(error), unwritten, sets, settings.runs);
    std::fflush(stdout);
    fmt::print(stderr, "attention {:8} {} s{:<6} d{:<4} {:9} {:8.3f} ms {:7.1f} TFLOP/s  error {:.2e}\n",
               path_name(path), element_type_name(type), seq_len, head_dim, causal ? "causal" : "non-causal",
               timing.median_ms, tflops, error);
}

// Samples of c = a·bᵀ against float64 dot products of the same float inputs.
double gemm_sample_error(const Stream& stream, const DeviceBuffer& a, const DeviceBuffer& b, const DeviceBuffer& c,
                         int size) {
    std::mt19937 random(7);
    std::uniform_int_distribution<int> index(0, size - 1);
    std::vector<float> row_a(size), row_b(size), results, expected;
    for (int sample = 0; sample < 32; ++sample) {
        const int i = index(random), j = index(random);
        const std::size_t row_bytes = std::size_t(size) * sizeof(float);
        a.copy_to_host(row_a.data(), row_bytes, std::size_t(i) * row_bytes, stream.get());
        b.copy_to_host(row_b.data(), row_bytes, std::size_t(j) * row_bytes, stream.get());
        float value = 0;
        c.copy_to_host(&value, sizeof value, (std::size_t(i) * size + j) * sizeof(float), stream.get());
        double sum = 0;
        for (int x = 0; x < size; ++x) sum += double(row_a[x]) * double(row_b[x]);
        results.push_back(value);
        expected.push_back(static_cast<float>(sum));
    }
    return relative_error(results, expected);
}

// The path `automatic` picks is the "gemm" row gpu-bench compares with
// cuBLAS; on Hopper the mma.sync fallback is timed too, as "gemm-fallback".
struct GemmPath {
    const char* bench;
    std::string name;
    GemmTiling tiling;
};

void bench_gemm(const Stream& stream, const Device& device, const Settings& settings, int size, const GemmPath& path) {
    const std::size_t elements = std::size_t(size) * size;
    const std::size_t bytes = elements * sizeof(float);
    const int sets = input_sets(device, 3 * bytes);
    struct InputSet {
        std::unique_ptr<DeviceBuffer> a, b, c;
    };
    std::vector<InputSet> inputs(sets);
    for (int s = 0; s < sets; ++s) {
        inputs[s] = {std::make_unique<DeviceBuffer>(bytes), std::make_unique<DeviceBuffer>(bytes),
                     std::make_unique<DeviceBuffer>(bytes)};
        check_cuda(launch_fill_normal_float(inputs[s].a->as<float>(), elements, 2000 + 10 * s, stream.get()), "fill a");
        check_cuda(launch_fill_normal_float(inputs[s].b->as<float>(), elements, 2001 + 10 * s, stream.get()), "fill b");
    }
    auto launch = [&](int s) {
        return launch_gemm_tf32(inputs[s].a->as<float>(), inputs[s].b->as<float>(), inputs[s].c->as<float>(), size,
                                size, size, stream.get(), FaultKind::none, path.tiling);
    };
    inputs[0].c->poison(stream.get());
    check_cuda(launch(0), "gemm launch");
    const auto values = inputs[0].c->download<float>(stream.get());
    const auto unwritten = std::count_if(values.begin(), values.end(), [](float x) { return std::isnan(x); });
    const double error = gemm_sample_error(stream, *inputs[0].a, *inputs[0].b, *inputs[0].c, size);

    const Timing timing = time_launches(stream, settings, sets, launch);
    const double tflops = 2.0 * size * double(size) * size / (timing.median_ms * 1e-3) / 1e12;
    fmt::print("{{\"bench\": \"{9}\", \"path\": \"tf32.{10}\", \"m\": {0}, \"n\": {0}, \"k\": {0}, "
               "\"median_ms\": {1}, \"min_ms\": {2}, \"max_ms\": {3}, \"tflops\": {4}, \"max_rel_error\": {5}, "
               "\"unwritten\": {6}, \"input_sets\": {7}, \"runs\": {8}}}\n",
               size, json_number(timing.median_ms), json_number(timing.min_ms), json_number(timing.max_ms),
               json_number(tflops), json_number(error), unwritten, sets, settings.runs, path.bench, path.name);
    std::fflush(stdout);
    fmt::print(stderr, "gemm tf32 {:8} {}^3 {:8.3f} ms {:7.1f} TFLOP/s  error {:.2e}\n", path.name, size,
               timing.median_ms, tflops, error);
}

// c = (a·bᵀ) * scale with e4m3 operands, the product torch._scaled_mm makes
// with per-tensor scales (bench/kernels/torch_peers.py times it at the same sizes):
// the mma.sync kernel everywhere from sm_89, the wgmma one on sm_90.  Every
// element of the first output must be written; 32 sampled elements are held
// to the check's bound.
enum class Fp8Path { mma_sync, wgmma };

void bench_gemm_fp8(const Stream& stream, const Device& device, const Settings& settings, int size, Fp8Path path) {
    const std::size_t elements = std::size_t(size) * size;
    const int sets = input_sets(device, 2 * elements + elements * sizeof(float));
    struct InputSet {
        std::unique_ptr<DeviceBuffer> a, b, c;
    };
    std::vector<InputSet> inputs(sets);
    for (int s = 0; s < sets; ++s) {
        inputs[s] = {std::make_unique<DeviceBuffer>(elements), std::make_unique<DeviceBuffer>(elements),
                     std::make_unique<DeviceBuffer>(elements * sizeof(float))};
        check_cuda(launch_fill_fp8(Fp8Format::e4m3, Fp8Spread::moderate, inputs[s].a->as<std::uint8_t>(), elements,
                                   3000 + 10 * s, stream.get()),
                   "fill a");
        check_cuda(launch_fill_fp8(Fp8Format::e4m3, Fp8Spread::moderate, inputs[s].b->as<std::uint8_t>(), elements,
                                   3001 + 10 * s, stream.get()),
                   "fill b");
    }
    const float scale = 0.75f;
    auto launch = [&](int s) {
        const auto* a = inputs[s].a->as<std::uint8_t>();
        const auto* b = inputs[s].b->as<std::uint8_t>();
        float* c = inputs[s].c->as<float>();
        return path == Fp8Path::wgmma
                   ? launch_gemm_fp8_wgmma(Fp8Format::e4m3, Fp8Format::e4m3, a, b, c, size, size, size, scale,
                                           stream.get(), FaultKind::none)
                   : launch_gemm_fp8(Fp8Format::e4m3, Fp8Format::e4m3, a, b, c, size, size, size, scale,
                                     stream.get(), FaultKind::none);
    };
    inputs[0].c->poison(stream.get());
    check_cuda(launch(0), "fp8 gemm launch");
    const auto values = inputs[0].c->download<float>(stream.get());
    std::mt19937 random(11);
    std::uniform_int_distribution<int> index(0, size - 1);
    std::vector<std::size_t> samples;
    std::vector<double> exact;
    std::vector<float> modelled;
    std::vector<std::uint8_t> row_a(size), row_b(size);
    for (int sample = 0; sample < 32; ++sample) {
        const int i = index(random), j = index(random);
        inputs[0].a->copy_to_host(row_a.data(), size, std::size_t(i) * size, stream.get());
        inputs[0].b->copy_to_host(row_b.data(), size, std::size_t(j) * size, stream.get());
        samples.push_back(std::size_t(i) * size + j);
        exact.push_back(exact_fp8_dot(Fp8Format::e4m3, row_a.data(), Fp8Format::e4m3, row_b.data(), size) * scale);
        modelled.push_back(modelled_fp8_dot(Fp8Format::e4m3, row_a.data(), Fp8Format::e4m3, row_b.data(), size) *
                           scale);
    }
    const Fp8GemmVerdict verdict = judge_gemm_fp8_samples("bench", values, samples, exact, modelled);

    const Timing timing = time_launches(stream, settings, sets, launch);
    const double tflops = 2.0 * size * double(size) * size / (timing.median_ms * 1e-3) / 1e12;
    const char* name = path == Fp8Path::wgmma ? "wgmma" : "mma.sync";
    fmt::print("{{\"bench\": \"gemm_fp8\", \"path\": \"e4m3.{}\", \"m\": {}, \"n\": {}, \"k\": {}, "
               "\"median_ms\": {}, \"min_ms\": {}, \"max_ms\": {}, \"tflops\": {}, \"max_rel_error\": {}, "
               "\"tolerance\": {}, \"passed\": {}, \"input_sets\": {}, \"runs\": {}}}\n",
               name, size, size, size, json_number(timing.median_ms), json_number(timing.min_ms),
               json_number(timing.max_ms), json_number(tflops), json_number(verdict.error),
               json_number(verdict.tolerance), verdict.problem.empty() ? "true" : "false", sets, settings.runs);
    std::fflush(stdout);
    fmt::print(stderr, "gemm fp8 e4m3 {:8} {}^3 {:8.3f} ms {:7.1f} TFLOP/s  error {:.2e} (bound {:.2e}){}\n", name,
               size, timing.median_ms, tflops, verdict.error, verdict.tolerance,
               verdict.problem.empty() ? "" : "  " + verdict.problem);
}

}  // namespace

int main(int argc, char** argv) {
    Settings settings;
    CLI::App app{"Times provision's attention, TF32 and fp8 GEMM kernels on GPU 0; JSON lines on stdout."};
    app.add_option("--warmup", settings.warmup, "untimed launches per shape")->check(CLI::NonNegativeNumber);
    app.add_option("--runs", settings.runs, "timed launches per shape (the median is reported)")
        ->check(CLI::PositiveNumber);
    app.add_option("--batch", settings.batch)->check(CLI::PositiveNumber);
    app.add_option("--heads", settings.heads)->check(CLI::PositiveNumber);
    app.add_option("--seq-lens", settings.seq_lens, "attention sequence lengths")->delimiter(',');
    app.add_option("--head-dims", settings.head_dims, "attention head dimensions (64, 128)")->delimiter(',');
    app.add_option("--gemm-sizes", settings.gemm_sizes, "square GEMM sizes")->delimiter(',');
    app.add_option("--parts", settings.parts, "attention, gemm (TF32), fp8 (the fp8 GEMM)")
        ->delimiter(',')
        ->check(CLI::IsMember({"attention", "gemm", "fp8"}));
    CLI11_PARSE(app, argc, argv);

    Device device;
    try {
        check_cuda(cudaSetDevice(device.index), "cudaSetDevice");
        check_cuda(cudaDeviceGetAttribute(&device.major, cudaDevAttrComputeCapabilityMajor, device.index),
                   "cudaDeviceGetAttribute");
        check_cuda(cudaDeviceGetAttribute(&device.minor, cudaDevAttrComputeCapabilityMinor, device.index),
                   "cudaDeviceGetAttribute");
        int l2 = 0;
        check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device.index), "cudaDeviceGetAttribute");
        device.l2_bytes = static_cast<std::size_t>(l2);
        Stream stream;
        const bool has_wgmma = device.major == 9 && device.minor == 0;
        for (int head_dim : settings.wants("attention") ? settings.head_dims : std::vector<int>{})
            for (int seq_len : settings.seq_lens)
                for (bool causal : {false, true}) {
                    for (ElementType type : {ElementType::fp16, ElementType::bf16})
                        if (type == ElementType::fp16 || device.major >= 8)
                            bench_attention(stream, device, settings, AttentionPath::mma_sync, type, seq_len,
                                            head_dim, causal);
                    if (has_wgmma)
                        bench_attention(stream, device, settings, AttentionPath::wgmma, ElementType::bf16, seq_len,
                                        head_dim, causal);
                }
        if (device.major >= 8 && settings.wants("gemm")) {
            const std::string automatic = gemm_tf32_path(device.major, device.minor);
            std::vector<GemmPath> paths = {{"gemm", automatic, GemmTiling::automatic}};
            if (automatic == "wgmma") paths.push_back({"gemm-fallback", "mma.sync", GemmTiling::block128x256_warps8});
            for (int size : settings.gemm_sizes)
                for (const GemmPath& path : paths) bench_gemm(stream, device, settings, size, path);
        }
        if (device.major * 10 + device.minor >= 89 && settings.wants("fp8"))
            for (int size : settings.gemm_sizes) {
                bench_gemm_fp8(stream, device, settings, size, Fp8Path::mma_sync);
                if (has_wgmma) bench_gemm_fp8(stream, device, settings, size, Fp8Path::wgmma);
            }
    } catch (const CudaFailure& failure) {
        fmt::print(stderr, "kernel_bench: {}\n", describe_cuda_failure(failure, device.index));
        return 1;
    }
    return 0;
}
