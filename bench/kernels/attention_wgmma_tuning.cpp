// A tuning aid for the wgmma attention kernel (kernels/attention_wgmma.cu)
// on an sm_90 GPU; docs/KERNELS.md has what it found.
//
//   attention_wgmma_tuning test    the launcher over many shapes, both turn
//                                  modes, the planted fault and a refused
//                                  head_dim; exit 1 on any failure
//   attention_wgmma_tuning bench [SEQ_LEN...]
//                                  TFLOP/s of each turn mode (plain,
//                                  pingpong) and of the launcher's choice
//
// Each output is poisoned first and judged by the gemm and attention
// checks' rule (tolerance.h) against the fp32 GPU reference of every
// (batch, head) pair: error <= 2 x the error of the same computation in bf16
// + 1e-4.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "driver_support.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "tolerance.h"

using namespace provision::kernels;
using namespace provision::kernels::detail;

namespace {

constexpr double kFloor = 1e-4;  // as the attention check (check_attention.cpp)

const char* turns_name(AttentionTurns turns) {
    switch (turns) {
        case AttentionTurns::automatic: return "launcher";
        case AttentionTurns::plain: return "plain";
        case AttentionTurns::pingpong: return "pingpong";
    }
    return "?";
}

AttentionProblem problem_of(int batch, int heads, int seq_len, int head_dim, bool causal) {
    return {batch, heads, seq_len, head_dim, causal, 1.f / std::sqrt(static_cast<float>(head_dim))};
}

std::string shape_of(const AttentionProblem& p) {
    return fmt::format("B{} H{} S{} D{} {}", p.batch, p.heads, p.seq_len, p.head_dim, p.causal ? "causal" : "full");
}

std::size_t elements_of(const AttentionProblem& p) {
    return std::size_t(p.batch) * p.heads * p.seq_len * p.head_dim;
}

struct Tensors {
    explicit Tensors(const AttentionProblem& p)
        : q(elements_of(p) * 2), k(elements_of(p) * 2), v(elements_of(p) * 2), o(elements_of(p) * 2) {}
    void fill(const AttentionProblem& p, std::uint64_t seed, const Stream& stream) {
        check_cuda(launch_fill_normal(ElementType::bf16, q.get(), elements_of(p), seed * 3 + 1, stream.get()), "fill q");
        check_cuda(launch_fill_normal(ElementType::bf16, k.get(), elements_of(p), seed * 3 + 2, stream.get()), "fill k");
        check_cuda(launch_fill_normal(ElementType::bf16, v.get(), elements_of(p), seed * 3 + 3, stream.get()), "fill v");
    }
    DeviceBuffer q, k, v, o;
};

// One run on fresh inputs: passes when the output is within the bound (or,
// with the planted wrong result, when it is not).
bool run_case(AttentionTurns turns, const AttentionProblem& p, std::uint64_t seed, const Stream& stream,
              FaultKind fault = FaultKind::none) {
    Tensors t(p);
    t.fill(p, seed, stream);
    t.o.poison(stream.get());
    check_cuda(launch_attention_bf16_wgmma(t.q.get(), t.k.get(), t.v.get(), t.o.get(), p, stream.get(), fault, turns),
               "wgmma attention launch");
    const int pairs = p.batch * p.heads;
    DeviceBuffer reference(std::size_t(pairs) * p.seq_len * p.head_dim * 4), low(reference.bytes());
    check_cuda(launch_attention_reference(ElementType::bf16, false, t.q.get(), t.k.get(), t.v.get(),
                                          reference.as<float>(), p, pairs, stream.get()),
               "reference");
    check_cuda(launch_attention_reference(ElementType::bf16, true, t.q.get(), t.k.get(), t.v.get(), low.as<float>(),
                                          p, pairs, stream.get()),
               "reference in bf16");
    const auto bits = t.o.download<std::uint16_t>(stream.get());
    std::vector<float> out(bits.size());
    std::transform(bits.begin(), bits.end(), out.begin(), bf16_bits_to_float);
    const auto expected = reference.download<float>(stream.get());
    const double error = relative_error(out, expected);
    const double bound = tolerance_from(relative_error(low.download<float>(stream.get()), expected), kFloor);
    const auto unwritten = std::count(bits.begin(), bits.end(), kPoison16);
    const bool pass = unwritten == 0 && within_tolerance(error, bound);
    const bool wanted = fault == FaultKind::wrong_result ? !pass : pass;
    fmt::print("{:9} {:24} error {:.2e} bound {:.2e} unwritten {}{}  {}\n", turns_name(turns), shape_of(p), error,
               bound, unwritten, fault == FaultKind::wrong_result ? " (planted wrong result)" : "",
               wanted ? "ok" : "FAIL");
    return wanted;
}

int test(const Stream& stream) {
    int failures = 0;
    std::uint64_t seed = 12345;
    for (int d : {64, 128})
        for (bool causal : {false, true})
            for (int s : {1, 77, 128, 129, 1000, 4096})
                failures += !run_case(AttentionTurns::automatic, problem_of(2, 3, s, d, causal), ++seed, stream);
    failures += !run_case(AttentionTurns::automatic, problem_of(1, 1, 16384, 128, false), ++seed, stream);
    failures += !run_case(AttentionTurns::automatic, problem_of(1, 2, 16384, 128, true), ++seed, stream);
    failures += !run_case(AttentionTurns::automatic, problem_of(2, 3, 1000, 128, false), ++seed, stream,
                          FaultKind::wrong_result);
    for (AttentionTurns turns : {AttentionTurns::plain, AttentionTurns::pingpong})
        for (int d : {64, 128})
            for (bool causal : {false, true})
                for (int s : {200, 1000}) failures += !run_case(turns, problem_of(1, 4, s, d, causal), ++seed, stream);
    // The launcher's own refusal.
    DeviceBuffer dummy(16);
    const cudaError_t refused = launch_attention_bf16_wgmma(dummy.get(), dummy.get(), dummy.get(), dummy.get(),
                                                            problem_of(1, 1, 128, 96, false), stream.get(),
                                                            FaultKind::none);
    if (refused != cudaErrorInvalidValue) {
        fmt::print("head_dim 96: {} instead of cudaErrorInvalidValue  FAIL\n", cudaGetErrorName(refused));
        ++failures;
    }
    fmt::print("{}: {} failure(s)\n", failures ? "TEST FAILED" : "TEST PASSED", failures);
    return failures ? 1 : 0;
}

// Median of `runs` launches after three warm-ups, alternating two input
// sets (more than the L2 at these sizes).
double median_ms(AttentionTurns turns, const AttentionProblem& p, Tensors (&sets)[2], const Stream& stream, int runs) {
    auto launch = [&](int i) {
        const Tensors& t = sets[i % 2];
        check_cuda(launch_attention_bf16_wgmma(t.q.get(), t.k.get(), t.v.get(), t.o.get(), p, stream.get(),
                                               FaultKind::none, turns),
                   "wgmma attention launch");
    };
    const std::vector<double> times = provision::bench::time_launches(stream, 3, runs, launch);
    return times[times.size() / 2];
}

int bench(const std::vector<int>& lengths, const Stream& stream) {
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
    fmt::print("{}, {} SMs; TFLOP/s, median of 30 launches (10 at 16384)\n\n", properties.name,
               properties.multiProcessorCount);
    fmt::print("| head_dim | seq | mask | plain | pingpong | launcher |\n| --- | --- | --- | --- | --- | --- |\n");
    for (int d : {128, 64})
        for (bool causal : {false, true})
            for (int s : lengths) {
                const AttentionProblem p = problem_of(4, 16, s, d, causal);
                Tensors sets[2] = {Tensors(p), Tensors(p)};
                sets[0].fill(p, 7, stream);
                sets[1].fill(p, 8, stream);
                const double flops = 4.0 * p.batch * p.heads * double(s) * s * d * (causal ? 0.5 : 1.0);
                std::string row = fmt::format("| {} | {} | {} |", d, s, causal ? "causal" : "full");
                for (AttentionTurns turns : {AttentionTurns::plain, AttentionTurns::pingpong, AttentionTurns::automatic})
                    row += fmt::format(" {:.1f} |", flops / (median_ms(turns, p, sets, stream, s >= 16384 ? 10 : 30) * 1e-3) / 1e12);
                fmt::print("{}\n", row);
                std::fflush(stdout);
            }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return provision::bench::driver_main(
        argc, argv, "test | bench [SEQ_LEN...]", test, [](const Stream& stream, const std::vector<std::string>& args) {
            std::vector<int> lengths{2048, 4096, 8192, 16384};
            if (!args.empty()) lengths.clear();
            for (const std::string& arg : args) lengths.push_back(std::atoi(arg.c_str()));
            return bench(lengths, stream);
        });
}
