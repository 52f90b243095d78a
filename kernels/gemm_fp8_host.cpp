#include "gemm_fp8_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>

#include "fp8_codes.h"
#include "parallel_for.h"
#include "tolerance.h"

namespace provision::kernels {
namespace {

// Rough operations per element of a product the accumulator model follows
// (decode, align, truncate), for parallel_for's choice of threads.
constexpr std::size_t kModelledOperations = 8;

// Decoded values of all 256 codes of a format, looked up per element.
using DecodeTable = std::array<double, 256>;

const DecodeTable& decode_table(Fp8Format format) {
    static const auto make = [](Fp8Format f) {
        DecodeTable table{};
        for (int code = 0; code < 256; ++code) table[code] = fp8_bits_to_float(f, static_cast<std::uint8_t>(code));
        return table;
    };
    static const DecodeTable e4m3 = make(Fp8Format::e4m3), e5m2 = make(Fp8Format::e5m2);
    return format == Fp8Format::e4m3 ? e4m3 : e5m2;
}

// x truncated toward zero to a multiple of `quantum` (a power of two): exact.
double truncated(double x, double quantum) { return std::trunc(x / quantum) * quantum; }

// x truncated toward zero to `bits` significant bits.
double significant_bits(double x, int bits) {
    if (x == 0) return 0;
    return truncated(x, std::ldexp(1.0, std::ilogb(x) - (bits - 1)));
}

// The code that stands for 1.0.
std::uint8_t one_code(Fp8Format format) { return format == Fp8Format::e4m3 ? 0x38 : 0x3C; }

struct Pairing {
    Fp8Format a, b;
};

std::string pairing_name(const Pairing& p) {
    return fmt::format("{} x {}", fp8_format_name(p.a), fp8_format_name(p.b));
}

std::vector<std::uint8_t> random_codes(Fp8Format format, Fp8Spread spread, std::size_t count, std::uint64_t stream) {
    std::vector<std::uint8_t> codes(count);
    for (std::size_t i = 0; i < count; ++i) codes[i] = random_fp8_code(format, spread, random_bits(stream, i));
    return codes;
}

// Every finite code of `format`, 32 to a row, each once ([8, 32], the NaN
// and infinity codes replaced by zeros), and an identity of `other`'s 1.0.
void sweep_and_identity(Fp8Format format, Fp8Format other, std::vector<std::uint8_t>& codes,
                        std::vector<std::uint8_t>& identity) {
    codes.assign(256, 0);
    for (int code = 0; code < 256; ++code)
        if (fp8_is_finite(format, static_cast<std::uint8_t>(code))) codes[code] = static_cast<std::uint8_t>(code);
    identity.assign(32 * 32, 0);
    for (int i = 0; i < 32; ++i) identity[i * 32 + i] = one_code(other);
}

// A scale that is no power of two, so a kernel that drops it shows.
float random_scale(std::uint64_t seed, std::uint64_t which) {
    const double u = static_cast<double>(random_bits(seed, which) >> 11) * 0x1p-53;
    return static_cast<float>(0.3 + 1.5 * u);
}

// max |out - ref| / |ref| over the elements; an element due to be 0 must be
// 0 exactly.  NaN anywhere makes it NaN.
double per_element_error(std::span<const float> out, const std::vector<double>& ref) {
    if (out.size() != ref.size() || ref.empty()) return NAN;
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double difference = std::fabs(static_cast<double>(out[i]) - ref[i]);
        if (std::isnan(difference)) return NAN;
        const double error = ref[i] != 0 ? difference / std::fabs(ref[i]) : (difference == 0 ? 0.0 : INFINITY);
        worst = std::max(worst, error);
    }
    return worst;
}

double error_of(const Fp8GemmProblem& problem, std::span<const float> output) {
    return problem.per_element ? per_element_error(output, problem.exact) : relative_error(output, problem.exact);
}

void finish_problem(Fp8GemmProblem& problem, std::uint64_t seed, std::uint64_t index) {
    problem.scale_a = random_scale(seed, 2 * index);
    problem.scale_b = random_scale(seed, 2 * index + 1);
    problem.scale = problem.scale_a * problem.scale_b;
    const double scale = static_cast<double>(problem.scale_a) * static_cast<double>(problem.scale_b);
    problem.exact.assign(static_cast<std::size_t>(problem.m) * problem.n, 0.0);
    std::vector<float> modelled(problem.exact.size());
    parallel_for(
        static_cast<std::size_t>(problem.m),
        [&](std::size_t row) {
            const std::uint8_t* a_row = &problem.a[row * problem.k];
            for (int col = 0; col < problem.n; ++col) {
                const std::uint8_t* b_row = &problem.b[static_cast<std::size_t>(col) * problem.k];
                const std::size_t at = row * problem.n + col;
                problem.exact[at] = exact_fp8_dot(problem.a_format, a_row, problem.b_format, b_row, problem.k) * scale;
                modelled[at] =
                    modelled_fp8_dot(problem.a_format, a_row, problem.b_format, b_row, problem.k) * problem.scale;
            }
        },
        kModelledOperations * static_cast<std::size_t>(problem.n) * static_cast<std::size_t>(problem.k));
    problem.accumulation_error = error_of(problem, modelled);
    problem.tolerance = tolerance_from(problem.accumulation_error, kFp8GemmFloor);
}

std::string verdict_problem(std::span<const float> output, double error, double tolerance) {
    const auto unwritten = std::count_if(output.begin(), output.end(),
                                         [](float x) { return std::bit_cast<std::uint32_t>(x) == 0xFFFFFFFFu; });
    const auto nan = std::count_if(output.begin(), output.end(), [](float x) { return std::isnan(x); }) - unwritten;
    if (unwritten > 0) return fmt::format("{} of {} output elements were never written", unwritten, output.size());
    if (nan > 0) return fmt::format("{} output elements are NaN", nan);
    if (!within_tolerance(error, tolerance)) return fmt::format("error {:.3e} > tolerance {:.3e}", error, tolerance);
    return {};
}

}  // namespace

double Fp8GemmVerdict::ratio() const { return tolerance > 0 ? error / tolerance : INFINITY; }

float accumulate_fp8_products(const double* products, int count, const Fp8AccumulatorModel& model) {
    float total = 0;
    for (int group = 0; group < count; group += model.promotion_interval) {
        const int group_end = std::min(count, group + model.promotion_interval);
        double partial = 0;  // the tensor cores' accumulator
        for (int step = group; step < group_end; step += model.instruction_k) {
            const int step_end = std::min(group_end, step + model.instruction_k);
            double largest = std::fabs(partial);
            for (int i = step; i < step_end; ++i) largest = std::max(largest, std::fabs(products[i]));
            if (largest == 0) continue;
            // Every addend aligned to the largest and cut toward zero; the
            // sum is exact in fp64 (at most 33 addends of 13 bits).
            const double quantum = std::ldexp(1.0, std::ilogb(largest) - model.fraction_bits);
            double sum = truncated(partial, quantum);
            for (int i = step; i < step_end; ++i) sum += truncated(products[i], quantum);
            partial = significant_bits(sum, model.fraction_bits + 1);
        }
        total += static_cast<float>(partial);  // exact conversion: at most 13 significant bits
    }
    return total;
}

double exact_fp8_dot(Fp8Format a_format, const std::uint8_t* a_row, Fp8Format b_format, const std::uint8_t* b_row,
                     int k) {
    const DecodeTable& a = decode_table(a_format);
    const DecodeTable& b = decode_table(b_format);
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += a[a_row[i]] * b[b_row[i]];
    return sum;
}

float modelled_fp8_dot(Fp8Format a_format, const std::uint8_t* a_row, Fp8Format b_format, const std::uint8_t* b_row,
                       int k, const Fp8AccumulatorModel& model) {
    const DecodeTable& a = decode_table(a_format);
    const DecodeTable& b = decode_table(b_format);
    thread_local std::vector<double> products;
    products.resize(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) products[i] = a[a_row[i]] * b[b_row[i]];  // 8 significant bits: exact
    return accumulate_fp8_products(products.data(), k, model);
}

std::vector<float> modelled_gemm_fp8(const Fp8GemmProblem& problem, const Fp8AccumulatorModel& model) {
    std::vector<float> out(static_cast<std::size_t>(problem.m) * problem.n);
    parallel_for(
        static_cast<std::size_t>(problem.m),
        [&](std::size_t row) {
            for (int col = 0; col < problem.n; ++col)
                out[row * problem.n + col] =
                    modelled_fp8_dot(problem.a_format, &problem.a[row * problem.k], problem.b_format,
                                     &problem.b[static_cast<std::size_t>(col) * problem.k], problem.k, model) *
                    problem.scale;
        },
        kModelledOperations * static_cast<std::size_t>(problem.n) * static_cast<std::size_t>(problem.k));
    return out;
}

Fp8GemmInputs prepare_gemm_fp8_inputs(std::uint64_t seed, bool full) {
    Fp8GemmInputs inputs;
    inputs.seed = seed;
    inputs.full = full;
    // e4m3 x e4m3 is the forward pass, e5m2 (gradients) x e4m3 (weights) the
    // backward; e5m2 x e5m2 puts e5m2 in the A slot too.
    const Pairing pairings[] = {{Fp8Format::e4m3, Fp8Format::e4m3},
                                {Fp8Format::e5m2, Fp8Format::e4m3},
                                {Fp8Format::e5m2, Fp8Format::e5m2}};
    std::uint64_t index = 0;
    for (const Pairing& pairing : pairings) {
        const std::string name = pairing_name(pairing);
        auto add = [&](Fp8GemmProblem problem) {
            problem.a_format = pairing.a;
            problem.b_format = pairing.b;
            finish_problem(problem, seed, index++);
            inputs.problems.push_back(std::move(problem));
        };
        {   // every code of a's format: c = a (8 x 32) times the identity
            Fp8GemmProblem p;
            p.label = fmt::format("{}, every {} code of a, 8x32x32", name, fp8_format_name(pairing.a));
            p.m = 8, p.n = 32, p.k = 32;
            p.per_element = true;
            sweep_and_identity(pairing.a, pairing.b, p.a, p.b);
            add(std::move(p));
        }
        {   // every code of b's format: c = identity times b^T (32 x 8)
            Fp8GemmProblem p;
            p.label = fmt::format("{}, every {} code of b, 32x8x32", name, fp8_format_name(pairing.b));
            p.m = 32, p.n = 8, p.k = 32;
            p.per_element = true;
            sweep_and_identity(pairing.b, pairing.a, p.b, p.a);
            add(std::move(p));
        }
        {   // sizes that end inside a tile (m, n) and inside a 128-deep k-slice
            Fp8GemmProblem p;
            p.label = fmt::format("{}, 136x96x320, moderate values", name);
            p.m = 136, p.n = 96, p.k = 320;
            p.a = random_codes(pairing.a, Fp8Spread::moderate, std::size_t(p.m) * p.k, random_bits(seed, 1000 + index));
            p.b = random_codes(pairing.b, Fp8Spread::moderate, std::size_t(p.n) * p.k, random_bits(seed, 2000 + index));
            add(std::move(p));
        }
        {
            Fp8GemmProblem p;
            p.label = fmt::format("{}, 72x64x256, full range", name);
            p.m = 72, p.n = 64, p.k = 256;
            p.a = random_codes(pairing.a, Fp8Spread::full_range, std::size_t(p.m) * p.k,
                               random_bits(seed, 3000 + index));
            p.b = random_codes(pairing.b, Fp8Spread::full_range, std::size_t(p.n) * p.k,
                               random_bits(seed, 4000 + index));
            add(std::move(p));
        }
    }
    return inputs;
}

Fp8GemmVerdict judge_gemm_fp8(const Fp8GemmProblem& problem, std::span<const float> output) {
    Fp8GemmVerdict verdict;
    verdict.shape = problem.label;
    verdict.error = error_of(problem, output);
    verdict.tolerance = problem.tolerance;
    verdict.problem = output.size() == problem.exact.size()
                          ? verdict_problem(output, verdict.error, verdict.tolerance)
                          : fmt::format("{} output elements instead of {}", output.size(), problem.exact.size());
    return verdict;
}

Fp8GemmVerdict judge_gemm_fp8_samples(const std::string& shape, const std::vector<float>& output,
                                      const std::vector<std::size_t>& samples, const std::vector<double>& exact,
                                      const std::vector<float>& modelled) {
    std::vector<float> sampled;
    for (const std::size_t at : samples) sampled.push_back(at < output.size() ? output[at] : NAN);
    Fp8GemmVerdict verdict;
    verdict.shape = shape;
    verdict.error = relative_error(sampled, exact);
    verdict.tolerance = tolerance_from(relative_error(modelled, exact), kFp8GemmFloor);
    verdict.problem = verdict_problem(output, verdict.error, verdict.tolerance);
    return verdict;
}

}  // namespace provision::kernels
