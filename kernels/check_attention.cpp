#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "attention_judge.h"
#include "checks.h"
#include "cuda_support.h"
#include "host_inputs.h"
#include "kernel_loading.h"
#include "reference_cpu.h"

namespace provision::kernels::detail {

std::string describe_shape(const AttentionProblem& problem) {
    return fmt::format("b{} h{} s{} d{}{}", problem.batch, problem.heads, problem.seq_len, problem.head_dim,
                       problem.causal ? " causal" : "");
}

namespace {

struct Shape {
    AttentionProblem problem;
    bool cpu_reference;  // small enough for the fp64 CPU reference
};

AttentionProblem make_problem(int batch, int heads, int seq_len, int head_dim, bool causal) {
    return {batch, heads, seq_len, head_dim, causal, 1.f / std::sqrt(static_cast<float>(head_dim))};
}

// Both kernels take any length; the odd ones catch tile-edge mistakes.  The
// larger two are judged against the GPU's fp32 reference alone, which the
// smaller ones prove against the fp64 one.
std::vector<Shape> quick_shapes() {
    return {{make_problem(1, 2, 128, 64, false), true},
            {make_problem(1, 2, 128, 128, true), true},
            {make_problem(2, 3, 200, 64, true), true},   // no multiple of any tile
            {make_problem(1, 2, 77, 128, false), true},  // shorter than one tile
            {make_problem(2, 2, 384, 64, true), false},
            {make_problem(1, 4, 512, 128, false), false}};
}

std::size_t elements_of(const AttentionProblem& problem) {
    return static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_len * problem.head_dim;
}

std::uint64_t seed_for(std::uint64_t seed, int shape, int tensor) {
    return seed * 0x100000001B3ull + static_cast<std::uint64_t>(shape) * 16 + static_cast<std::uint64_t>(tensor);
}

std::vector<float> decode(ElementType type, const std::vector<std::uint16_t>& bits) {
    std::vector<float> values(bits.size());
    std::transform(bits.begin(), bits.end(), values.begin(), [type](std::uint16_t b) { return bits_to_float(type, b); });
    return values;
}

std::size_t tensor_bytes_of(const AttentionProblem& problem) { return elements_of(problem) * 2; }

std::size_t reference_bytes_of(const AttentionProblem& problem, int reference_pairs) {
    return static_cast<std::size_t>(reference_pairs) * problem.seq_len * problem.head_dim * 4;
}

// The inputs, output and references of one shape, in an arena that may
// hold every shape of the check (one allocation, see DeviceArena).
struct Buffers {
    static std::size_t bytes_for(const AttentionProblem& problem, int reference_pairs) {
        return 4 * DeviceArena::footprint(tensor_bytes_of(problem)) +
               2 * DeviceArena::footprint(reference_bytes_of(problem, reference_pairs));
    }
    Buffers(ElementType type, const AttentionProblem& problem, int reference_pairs, DeviceArena& arena)
        : type(type), q(arena.take(tensor_bytes_of(problem))), k(arena.take(tensor_bytes_of(problem))),
          v(arena.take(tensor_bytes_of(problem))), o(arena.take(tensor_bytes_of(problem))),
          reference(arena.take(reference_bytes_of(problem, reference_pairs))),
          reference_low(arena.take(reference_bytes_of(problem, reference_pairs))) {}
    ElementType type;
    DeviceSpan q, k, v, o, reference, reference_low;
};

cudaError_t launch_kernel(const CheckContext& context, ElementType type, AttentionKernel kernel, const Buffers& b,
                          const AttentionProblem& problem, cudaStream_t stream) {
    if (kernel == AttentionKernel::mma)
        return launch_attention_mma(type, b.q.get(), b.k.get(), b.v.get(), b.o.get(), problem, context.major, stream,
                                    context.fault);
#if PROVISION_HAVE_WGMMA
    return launch_attention_bf16_wgmma(b.q.get(), b.k.get(), b.v.get(), b.o.get(), problem, stream, context.fault);
#else
    return cudaErrorNotSupported;
#endif
}

// Inputs drawn on the GPU: the benchmark's (seconds on the host), and the
// quick shapes' that only the GPU's references judge (most of the check's
// elements: drawing and uploading them was most of its host work).
void fill_inputs(const Buffers& b, const AttentionProblem& problem, std::uint64_t seed, int shape, cudaStream_t stream) {
    const std::size_t n = elements_of(problem);
    check_cuda(launch_fill_normal(b.type, b.q.get(), n, seed_for(seed, shape, 0), stream), "fill q");
    check_cuda(launch_fill_normal(b.type, b.k.get(), n, seed_for(seed, shape, 1), stream), "fill k");
    check_cuda(launch_fill_normal(b.type, b.v.get(), n, seed_for(seed, shape, 2), stream), "fill v");
}

void run_references(const Buffers& b, const AttentionProblem& problem, int pairs, cudaStream_t stream) {
    check_cuda(launch_attention_reference(b.type, false, b.q.get(), b.k.get(), b.v.get(), b.reference.as<float>(),
                                          problem, pairs, stream),
               "attention reference (fp32)");
    check_cuda(launch_attention_reference(b.type, true, b.q.get(), b.k.get(), b.v.get(), b.reference_low.as<float>(),
                                          problem, pairs, stream),
               "attention reference (input precision)");
}

// The shapes without the fp64 CPU reference (the large ones) live on the
// GPU alone: it draws their inputs and judges their outputs, so only their
// tallies come back, not 3.6 MB of outputs and references.
bool judged_on_gpu(const AttentionShapeInputs& shape) { return shape.reference64.empty(); }

// The kernels that make one shape's inputs (where the GPU draws them) and
// its references, in order; while kernels are loading, their loads.
void launch_input_kernels(const CheckContext& context, const AttentionShapeInputs& shape, int index,
                          const Buffers& b, const Stream& stream) {
    if (judged_on_gpu(shape)) fill_inputs(b, shape.problem, context.seed, index, stream.get());
    run_references(b, shape.problem, shape.problem.batch * shape.problem.heads, stream.get());
}

// Puts one shape's inputs and both references on `stream`.  Nothing waits
// for it here.
void enqueue_inputs_and_references(const CheckContext& context, const AttentionShapeInputs& shape, int index,
                                   const Buffers& b, const Stream& stream) {
    if (!judged_on_gpu(shape)) {
        b.q.upload(shape.q, stream.get());
        b.k.upload(shape.k, stream.get());
        b.v.upload(shape.v, stream.get());
    }
    // Poisoned (0xFF: NaN in fp16 and bf16), so that an element the kernel never writes is seen.
    b.o.poison(stream.get());
    launch_input_kernels(context, shape, index, b, stream);
}

// Tallies one such shape's output into `slot` (attention_judge.h).
void launch_tally(const AttentionShapeInputs& shape, const Buffers& b, AttentionTally* slot, const Stream& stream) {
    check_cuda(launch_attention_tally(b.type, b.o.as<const std::uint16_t>(), b.reference.as<const float>(),
                                      b.reference_low.as<const float>(), elements_of(shape.problem), slot,
                                      stream.get()),
               "attention tally");
}

// Loads every kernel the shapes will launch, before any is queued
// (kernel_loading.h).
void load_kernels(const CheckContext& context, AttentionKernel kernel, const AttentionInputs& inputs,
                  const std::vector<Buffers>& placed, AttentionTally* tallies, const Stream& stream) {
    const LoadingKernels loading;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        launch_input_kernels(context, inputs.shapes[i], static_cast<int>(i), placed[i], stream);
        check_cuda(launch_kernel(context, placed[i].type, kernel, placed[i], inputs.shapes[i].problem, stream.get()),
                   "attention kernel launch");
        if (judged_on_gpu(inputs.shapes[i])) launch_tally(inputs.shapes[i], placed[i], tallies + i, stream);
    }
}

// Puts the kernel on `stream` between `timer`'s events.
void enqueue_kernel(const CheckContext& context, AttentionKernel kernel, const AttentionProblem& problem,
                    const Buffers& b, const Stream& stream, EventTimer& timer) {
    timer.start(stream.get());
    check_cuda(launch_kernel(context, b.type, kernel, b, problem, stream.get()), "attention kernel launch");
    timer.stop(stream.get());
}

void download_shape(AttentionShapeInputs& shape, const Buffers& b, const Stream& stream) {
    b.o.download_into(shape.output, stream.get());
    b.reference.download_into(shape.reference32, stream.get());
    b.reference_low.download_into(shape.reference_low, stream.get());
}

JudgedShape judged(const AttentionShapeInputs& shape) {
    return {shape.problem, shape.output, shape.reference32, shape.reference_low, shape.reference64};
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

struct Throughput {
    double ms = 0;
    double tflops = 0;
};

// Times the kernel at one large shape (median of several runs after a
// warm-up) and checks the first head of its output.
Throughput benchmark(const CheckContext& context, ElementType type, AttentionKernel kernel,
                     const AttentionProblem& problem, const Stream& stream, Verdict& verdict) {
    constexpr int kWarmups = 2, kRuns = 10;
    DeviceArena memory(Buffers::bytes_for(problem, 1));
    const Buffers b(type, problem, 1, memory);
    fill_inputs(b, problem, context.seed, 99, stream.get());
    b.o.poison(stream.get());
    run_references(b, problem, 1, stream.get());
    for (int i = 0; i < kWarmups; ++i)
        check_cuda(launch_kernel(context, type, kernel, b, problem, stream.get()), "attention kernel launch");
    std::vector<double> times;
    EventTimer timer;
    for (int i = 0; i < kRuns; ++i) {
        timer.start(stream.get());
        check_cuda(launch_kernel(context, type, kernel, b, problem, stream.get()), "attention kernel launch");
        timer.stop(stream.get());
        times.push_back(timer.elapsed_ms());
    }
    stream.synchronize("attention kernel");
    const auto output = b.o.download<std::uint16_t>(stream.get());
    const auto reference32 = b.reference.download<float>(stream.get());
    const auto reference_low = b.reference_low.download<float>(stream.get());
    verdict = judge({{problem, output, reference32, reference_low, {}}}, type).front();
    Throughput result;
    result.ms = median(times);
    const double flops = 4.0 * problem.batch * problem.heads * static_cast<double>(problem.seq_len) *
                         problem.seq_len * problem.head_dim * (problem.causal ? 0.5 : 1.0);
    result.tflops = flops / (result.ms * 1e-3) / 1e12;
    return result;
}

}  // namespace

AttentionInputs prepare_attention_inputs(ElementType type, std::uint64_t seed) {
    AttentionInputs inputs;
    inputs.type = type;
    inputs.seed = seed;
    const auto shapes = quick_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        AttentionShapeInputs shape;
        shape.problem = shapes[i].problem;
        const std::size_t n = elements_of(shape.problem);
        const int index = static_cast<int>(i);
        if (shapes[i].cpu_reference) {
            shape.q = normal_bits(type, n, seed_for(seed, index, 0));
            shape.k = normal_bits(type, n, seed_for(seed, index, 1));
            shape.v = normal_bits(type, n, seed_for(seed, index, 2));
            shape.reference64 = attention_reference(decode(type, shape.q), decode(type, shape.k), decode(type, shape.v),
                                                    shape.problem);
            shape.output.resize(n);
            shape.reference32.resize(n);  // every (batch, head) pair has its reference
            shape.reference_low.resize(n);
        }
        inputs.shapes.push_back(std::move(shape));
    }
    return inputs;
}

CheckResult run_attention_check(const CheckContext& context, AttentionKernel kernel, AttentionInputs& inputs) {
    CheckResult result;
    // A stream per shape for its inputs and references: the small shapes
    // leave most of the GPU idle, so they run side by side.  The kernels
    // come after them all, one after another on a stream of their own, so
    // that each one's time is its own.
    std::vector<Stream> streams(inputs.shapes.size());
    Stream kernels;
    const ElementType type = inputs.type;
    const std::size_t tally_bytes = inputs.shapes.size() * sizeof(AttentionTally);
    std::size_t bytes = DeviceArena::footprint(tally_bytes);
    for (const auto& shape : inputs.shapes)
        bytes += Buffers::bytes_for(shape.problem, shape.problem.batch * shape.problem.heads);
    DeviceArena memory(bytes);
    const DeviceSpan tallies = memory.take(tally_bytes);  // a slot a shape; the GPU-judged ones' used
    std::vector<Buffers> placed;
    for (const AttentionShapeInputs& shape : inputs.shapes)
        placed.emplace_back(type, shape.problem, shape.problem.batch * shape.problem.heads, memory);
    load_kernels(context, kernel, inputs, placed, tallies.as<AttentionTally>(), kernels);
    check_cuda(cudaMemsetAsync(tallies.get(), 0, tally_bytes, kernels.get()), "cudaMemsetAsync");
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i)
        enqueue_inputs_and_references(context, inputs.shapes[i], static_cast<int>(i), placed[i], streams[i]);
    for (const Stream& stream : streams) kernels.wait_for(stream);
    std::vector<std::unique_ptr<EventTimer>> timers;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        timers.push_back(std::make_unique<EventTimer>());
        enqueue_kernel(context, kernel, inputs.shapes[i].problem, placed[i], kernels, *timers.back());
    }
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i)
        if (judged_on_gpu(inputs.shapes[i]))
            launch_tally(inputs.shapes[i], placed[i], tallies.as<AttentionTally>() + i, kernels);
    kernels.synchronize("attention kernel");
    std::vector<JudgedShape> on_host;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        result.ms += timers[i]->elapsed_ms();
        if (judged_on_gpu(inputs.shapes[i])) continue;
        download_shape(inputs.shapes[i], placed[i], kernels);
        on_host.push_back(judged(inputs.shapes[i]));
    }
    const std::vector<AttentionTally> counted = tallies.download<AttentionTally>(kernels.get());
    const std::vector<Verdict> host_verdicts = judge(on_host, type);
    std::vector<Verdict> verdicts;  // in the shapes' order
    for (std::size_t i = 0, next_on_host = 0; i < inputs.shapes.size(); ++i) {
        const AttentionProblem& problem = inputs.shapes[i].problem;
        verdicts.push_back(judged_on_gpu(inputs.shapes[i])
                               ? verdict_of(problem, elements_of(problem), false, tally_of(counted[i]))
                               : host_verdicts[next_on_host++]);
    }

    std::string benchmark_note;
    if (context.full) {
        for (bool causal : {false, true}) {
            Verdict verdict;
            const AttentionProblem problem = make_problem(4, 16, 4096, 128, causal);
            const Throughput throughput = benchmark(context, type, kernel, problem, kernels, verdict);
            verdicts.push_back(verdict);
            if (!causal) result.tflops = throughput.tflops;
            benchmark_note += fmt::format("; {}: {:.3f} ms, {:.1f} TFLOP/s", describe_shape(problem), throughput.ms,
                                          throughput.tflops);
        }
    }

    // Report the shape that came closest to failing (or the first failure).
    const auto failed = std::find_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return !v.problem.empty(); });
    const Verdict& shown = failed != verdicts.end()
                               ? *failed
                               : *std::max_element(verdicts.begin(), verdicts.end(),
                                                   [](const Verdict& a, const Verdict& b) { return a.ratio() < b.ratio(); });
    result.max_rel_error = shown.error;
    result.tolerance = shown.tolerance;
    if (failed != verdicts.end()) {
        result.status = CheckStatus::failed;
        result.detail = fmt::format("{}: {} (seed {})", shown.shape, shown.problem, context.seed);
    } else {
        result.status = CheckStatus::passed;
        result.detail = fmt::format("{} shapes; closest to the bound: {}{}", verdicts.size(), shown.shape, benchmark_note);
    }
    return result;
}

}  // namespace provision::kernels::detail
