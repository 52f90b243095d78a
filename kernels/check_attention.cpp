#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "checks.h"
#include "cuda_support.h"
#include "host_inputs.h"
#include "kernel_loading.h"
#include "parallel_for.h"
#include "reference_cpu.h"
#include "tolerance.h"

namespace provision::kernels::detail {

std::string describe_shape(const AttentionProblem& problem) {
    return fmt::format("b{} h{} s{} d{}{}", problem.batch, problem.heads, problem.seq_len, problem.head_dim,
                       problem.causal ? " causal" : "");
}

namespace {

// The floor of the tolerance rule (tolerance.h): far above the fp32/fp64
// references' own rounding (about 1e-6 here), far below what fp16/bf16
// rounding makes (1e-3 and more).
constexpr double kAttentionFloor = 1e-4;
// The GPU fp32 reference must agree this well with the CPU fp64 one.
constexpr double kReferenceAgreement = 1e-4;

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

// What one shape showed.
struct Verdict {
    std::string shape;
    double error = 0;
    double tolerance = 0;
    std::string problem;  // empty when the shape passed
    double ratio() const { return tolerance > 0 ? error / tolerance : INFINITY; }
};

// One shape's output and references as the judgement reads them.  The
// references cover the first (batch, head) pairs (all of them in the quick
// shapes, the first in a benchmark); reference64 is empty unless the CPU
// reference ran.
struct JudgedShape {
    AttentionProblem problem;
    std::span<const std::uint16_t> output;
    std::span<const float> reference32, reference_low;
    std::span<const double> reference64;
};

// What a part of one shape's output showed.
struct Tally {
    std::size_t unwritten = 0, nan = 0;
    ErrorExtent kernel;           // the output against the best reference
    ErrorExtent input_precision;  // the input-precision reference against it
    ErrorExtent agreement;        // the fp32 GPU reference against the fp64 one, where that ran

    void merge(const Tally& other) {
        unwritten += other.unwritten;
        nan += other.nan;
        kernel.merge(other.kernel);
        input_precision.merge(other.input_precision);
        agreement.merge(other.agreement);
    }
};

Tally tally(const JudgedShape& shape, ElementType type, std::size_t begin, std::size_t end) {
    Tally tally;
    const bool fp64 = !shape.reference64.empty();
    for (std::size_t i = begin; i < end; ++i) {
        const std::uint16_t bits = shape.output[i];
        const double out = bits_to_float(type, bits);
        if (bits == kPoison16) ++tally.unwritten;  // itself a NaN
        else if (std::isnan(out)) ++tally.nan;
        if (i >= shape.reference32.size()) continue;
        if (fp64) {
            tally.kernel.add(out, shape.reference64[i]);
            tally.input_precision.add(shape.reference_low[i], shape.reference64[i]);
            tally.agreement.add(shape.reference32[i], shape.reference64[i]);
        } else {
            tally.kernel.add(out, shape.reference32[i]);
            tally.input_precision.add(shape.reference_low[i], shape.reference32[i]);
        }
    }
    return tally;
}

Verdict verdict_of(const JudgedShape& shape, const Tally& tally) {
    Verdict verdict;
    verdict.shape = describe_shape(shape.problem);
    verdict.error = tally.kernel.error();
    verdict.tolerance = tolerance_from(tally.input_precision.error(), kAttentionFloor);
    if (!shape.reference64.empty())
        if (const double agreement = tally.agreement.error(); !(agreement <= kReferenceAgreement))
            verdict.problem = fmt::format("the fp32 GPU reference is off the fp64 CPU reference by {:.2e}", agreement);
    if (tally.unwritten > 0)
        verdict.problem = fmt::format("{} of {} output elements were never written", tally.unwritten, shape.output.size());
    else if (tally.nan > 0)
        verdict.problem = fmt::format("{} output elements are NaN", tally.nan);
    else if (verdict.problem.empty() && !within_tolerance(verdict.error, verdict.tolerance))
        verdict.problem = fmt::format("error {:.3e} > tolerance {:.3e}", verdict.error, verdict.tolerance);
    return verdict;
}

// Judges the shapes on the machine's cores, in chunks across all of them:
// the largest shape holds half the elements, so a thread per shape would
// leave most cores waiting on it.  The chunks' tallies merge exactly.
std::vector<Verdict> judge(const std::vector<JudgedShape>& shapes, ElementType type) {
    constexpr std::size_t kChunk = std::size_t{1} << 14;
    struct Piece {
        std::size_t shape, begin, end;
    };
    std::vector<Piece> pieces;
    for (std::size_t s = 0; s < shapes.size(); ++s)
        for (std::size_t begin = 0; begin < shapes[s].output.size(); begin += kChunk)
            pieces.push_back({s, begin, std::min(begin + kChunk, shapes[s].output.size())});
    std::vector<Tally> tallies(pieces.size());
    parallel_for(
        pieces.size(),
        [&](std::size_t i) { tallies[i] = tally(shapes[pieces[i].shape], type, pieces[i].begin, pieces[i].end); },
        kChunk * 8);
    std::vector<Tally> totals(shapes.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) totals[pieces[i].shape].merge(tallies[i]);
    std::vector<Verdict> verdicts;
    for (std::size_t s = 0; s < shapes.size(); ++s) verdicts.push_back(verdict_of(shapes[s], totals[s]));
    return verdicts;
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

// The kernels that make one shape's inputs (where the GPU draws them) and
// its references, in order; while kernels are loading, their loads.
void launch_input_kernels(const CheckContext& context, const AttentionShapeInputs& shape, int index,
                          const Buffers& b, const Stream& stream) {
    if (shape.q.empty()) fill_inputs(b, shape.problem, context.seed, index, stream.get());
    run_references(b, shape.problem, shape.problem.batch * shape.problem.heads, stream.get());
}

// Puts one shape's inputs and both references on `stream`.  Nothing waits
// for it here.
void enqueue_inputs_and_references(const CheckContext& context, const AttentionShapeInputs& shape, int index,
                                   const Buffers& b, const Stream& stream) {
    if (!shape.q.empty()) {
        b.q.upload(shape.q, stream.get());
        b.k.upload(shape.k, stream.get());
        b.v.upload(shape.v, stream.get());
    }
    // Poisoned (0xFF: NaN in fp16 and bf16), so that an element the kernel never writes is seen.
    b.o.poison(stream.get());
    launch_input_kernels(context, shape, index, b, stream);
}

// Loads every kernel the shapes will launch, before any is queued
// (kernel_loading.h).
void load_kernels(const CheckContext& context, AttentionKernel kernel, const AttentionInputs& inputs,
                  const std::vector<Buffers>& placed, const Stream& stream) {
    const LoadingKernels loading;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        launch_input_kernels(context, inputs.shapes[i], static_cast<int>(i), placed[i], stream);
        check_cuda(launch_kernel(context, placed[i].type, kernel, placed[i], inputs.shapes[i].problem, stream.get()),
                   "attention kernel launch");
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
        }
        shape.output.resize(n);
        shape.reference32.resize(n);  // every (batch, head) pair has its reference
        shape.reference_low.resize(n);
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
    std::size_t bytes = 0;
    for (const auto& shape : inputs.shapes)
        bytes += Buffers::bytes_for(shape.problem, shape.problem.batch * shape.problem.heads);
    DeviceArena memory(bytes);
    std::vector<Buffers> placed;
    for (const AttentionShapeInputs& shape : inputs.shapes)
        placed.emplace_back(type, shape.problem, shape.problem.batch * shape.problem.heads, memory);
    load_kernels(context, kernel, inputs, placed, kernels);
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i)
        enqueue_inputs_and_references(context, inputs.shapes[i], static_cast<int>(i), placed[i], streams[i]);
    for (const Stream& stream : streams) kernels.wait_for(stream);
    std::vector<std::unique_ptr<EventTimer>> timers;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        timers.push_back(std::make_unique<EventTimer>());
        enqueue_kernel(context, kernel, inputs.shapes[i].problem, placed[i], kernels, *timers.back());
    }
    kernels.synchronize("attention kernel");
    std::vector<JudgedShape> shapes;
    for (std::size_t i = 0; i < inputs.shapes.size(); ++i) {
        result.ms += timers[i]->elapsed_ms();
        download_shape(inputs.shapes[i], placed[i], kernels);
        shapes.push_back(judged(inputs.shapes[i]));
    }
    std::vector<Verdict> verdicts = judge(shapes, type);

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
