#include "attention_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "checks.h"
#include "parallel_for.h"

namespace provision::kernels::detail {

namespace {

// The floor of the tolerance rule (tolerance.h): far above the fp32/fp64
// references' own rounding (about 1e-6 here), far below what fp16/bf16
// rounding makes (1e-3 and more).
constexpr double kAttentionFloor = 1e-4;
// The GPU fp32 reference must agree this well with the CPU fp64 one.
constexpr double kReferenceAgreement = 1e-4;

ErrorExtent extent_of(unsigned long long worst_bits, unsigned long long scale_bits, unsigned nan) {
    ErrorExtent extent;
    extent.worst = std::bit_cast<double>(worst_bits);
    extent.scale = std::bit_cast<double>(scale_bits);
    extent.nan = nan != 0;
    return extent;
}

}  // namespace

double Verdict::ratio() const { return tolerance > 0 ? error / tolerance : INFINITY; }

void Tally::merge(const Tally& other) {
    unwritten += other.unwritten;
    nan += other.nan;
    kernel.merge(other.kernel);
    input_precision.merge(other.input_precision);
    agreement.merge(other.agreement);
}

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

Tally tally_of(const AttentionTally& counted) {
    Tally tally;
    tally.unwritten = counted.unwritten;
    tally.nan = counted.nan;
    tally.kernel = extent_of(counted.kernel_worst, counted.kernel_scale, counted.kernel_nan);
    tally.input_precision = extent_of(counted.input_worst, counted.input_scale, counted.input_nan);
    return tally;
}

Verdict verdict_of(const AttentionProblem& problem, std::size_t elements, bool fp64, const Tally& tally) {
    Verdict verdict;
    verdict.shape = describe_shape(problem);
    verdict.error = tally.kernel.error();
    verdict.tolerance = tolerance_from(tally.input_precision.error(), kAttentionFloor);
    if (fp64)
        if (const double agreement = tally.agreement.error(); !(agreement <= kReferenceAgreement))
            verdict.problem = fmt::format("the fp32 GPU reference is off the fp64 CPU reference by {:.2e}", agreement);
    if (tally.unwritten > 0)
        verdict.problem = fmt::format("{} of {} output elements were never written", tally.unwritten, elements);
    else if (tally.nan > 0)
        verdict.problem = fmt::format("{} output elements are NaN", tally.nan);
    else if (verdict.problem.empty() && !within_tolerance(verdict.error, verdict.tolerance))
        verdict.problem = fmt::format("error {:.3e} > tolerance {:.3e}", verdict.error, verdict.tolerance);
    return verdict;
}

// In chunks across all the cores: the largest shape holds most of the
// elements, so a thread per shape would leave most cores waiting on it.
// The chunks' tallies merge exactly.
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
    for (std::size_t s = 0; s < shapes.size(); ++s)
        verdicts.push_back(
            verdict_of(shapes[s].problem, shapes[s].output.size(), !shapes[s].reference64.empty(), totals[s]));
    return verdicts;
}

}  // namespace provision::kernels::detail
