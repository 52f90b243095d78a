// The host half of the fp8 GEMM checks without a GPU: the inputs the seed
// gives, the accumulator model, and that the tolerance passes what fp8
// tensor cores may return and fails what a broken kernel returns.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "fp8_codes.h"
#include "gemm_fp8_host.h"
#include "numeric_formats.h"

using namespace provision::kernels;

namespace {

// One fixed set of inputs for the whole file (it takes a moment to build).
const Fp8GemmInputs& inputs() {
    static const Fp8GemmInputs prepared = prepare_gemm_fp8_inputs(20261124, false);
    return prepared;
}

const Fp8GemmProblem& problem_with(const std::string& words, Fp8Format a, Fp8Format b) {
    for (const auto& problem : inputs().problems)
        if (problem.label.find(words) != std::string::npos && problem.a_format == a && problem.b_format == b)
            return problem;
    FAIL("no problem labelled " << words);
    return inputs().problems.front();
}

std::vector<float> as_float(const std::vector<double>& values) { return {values.begin(), values.end()}; }

}  // namespace

TEST_CASE("fp8 inputs come from the seed alone, never NaN or infinite, k a multiple of 16",
          "[kernels][fp8]") {
    const auto again = prepare_gemm_fp8_inputs(20261124, false);
    const auto other = prepare_gemm_fp8_inputs(7, false);
    REQUIRE(again.problems.size() == inputs().problems.size());
    REQUIRE(inputs().problems.size() == 12);  // 3 pairings x (2 sweeps, moderate, full range)
    bool any_differs = false;
    for (std::size_t i = 0; i < inputs().problems.size(); ++i) {
        const auto& p = inputs().problems[i];
        INFO(p.label);
        CHECK(p.a == again.problems[i].a);
        CHECK(p.b == again.problems[i].b);
        CHECK(p.scale == again.problems[i].scale);
        any_differs = any_differs || p.a != other.problems[i].a || p.scale != other.problems[i].scale;
        CHECK(p.k % 16 == 0);
        CHECK(p.a.size() == std::size_t(p.m) * p.k);
        CHECK(p.b.size() == std::size_t(p.n) * p.k);
        CHECK(p.exact.size() == std::size_t(p.m) * p.n);
        for (auto code : p.a) CHECK(fp8_is_finite(p.a_format, code));
        for (auto code : p.b) CHECK(fp8_is_finite(p.b_format, code));
        CHECK(std::fabs(std::log2(p.scale)) != std::round(std::fabs(std::log2(p.scale))));  // no power of two
        CHECK(p.tolerance >= kFp8GemmFloor);
        CHECK(std::isfinite(p.tolerance));
    }
    CHECK(any_differs);
}

TEST_CASE("the sweeps hold every finite code of both formats in both operands", "[kernels][fp8]") {
    for (const Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
        std::set<int> in_a, in_b;
        for (const auto& p : inputs().problems) {
            if (p.label.find("every") == std::string::npos) continue;
            if (p.a_format == format && p.label.find("code of a") != std::string::npos) in_a.insert(p.a.begin(), p.a.end());
            if (p.b_format == format && p.label.find("code of b") != std::string::npos) in_b.insert(p.b.begin(), p.b.end());
        }
        const std::size_t finite = format == Fp8Format::e4m3 ? 254 : 248;
        INFO(fp8_format_name(format));
        CHECK(in_a.size() == finite);
        CHECK(in_b.size() == finite);
    }
}

TEST_CASE("random fp8 codes: moderate ones include subnormals, full-range ones reach the largest", "[kernels][fp8]") {
    for (const Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
        INFO(fp8_format_name(format));
        int subnormal = 0, largest = 0, zero = 0;
        float biggest_moderate = 0;
        for (std::uint64_t i = 0; i < 20000; ++i) {
            const auto moderate = random_fp8_code(format, Fp8Spread::moderate, random_bits(99, i));
            const auto full = random_fp8_code(format, Fp8Spread::full_range, random_bits(98, i));
            REQUIRE(fp8_is_finite(format, moderate));
            REQUIRE(fp8_is_finite(format, full));
            const float value = std::fabs(fp8_bits_to_float(format, moderate));
            biggest_moderate = std::max(biggest_moderate, value);
            const int exponent_field = (moderate & 0x7F) >> (format == Fp8Format::e4m3 ? 3 : 2);
            subnormal += exponent_field == 0;
            zero += value == 0;
            largest += std::fabs(fp8_bits_to_float(format, full)) == (format == Fp8Format::e4m3 ? 448.f : 57344.f);
        }
        CHECK(subnormal > 300);  // about one in 32
        CHECK(zero == 0);
        CHECK(biggest_moderate < 16.f);
        CHECK(largest > 20);     // about 2 in 250
    }
}

TEST_CASE("the accumulator model: one product is exact, small addends are cut, groups join in fp32",
          "[kernels][fp8]") {
    const double one[] = {3.5};
    CHECK(accumulate_fp8_products(one, 1) == 3.5f);
    // Next to 1.0, 12 fraction bits keep 2^-12 and drop 2^-13.
    const double small[] = {1.0, 0x1p-12, 0x1p-13, 0x1.8p-13};
    CHECK(accumulate_fp8_products(small, 4) == 1.0f + 0x1p-12f);
    // Truncation is toward zero for negative addends too.
    const double negative[] = {-1.0, -0x1.8p-12};
    CHECK(accumulate_fp8_products(negative, 2) == -(1.0f + 0x1p-12f));
    // A product in the next 128-group is added in fp32, unharmed by the first group's size.
    std::vector<double> groups(129, 0.0);
    groups[0] = 1024.0;
    groups[128] = 0x1p-5;
    CHECK(accumulate_fp8_products(groups.data(), 129) == 1024.0f + 0x1p-5f);
    // With wide fractions and one instruction per group the model is fp32 summation of exact steps.
    Fp8AccumulatorModel wide;
    wide.fraction_bits = 40;
    const double many[] = {1.0, 1e-3, 2e-3, -4e-4};
    CHECK(accumulate_fp8_products(many, 4, wide) == static_cast<float>(1.0 + 1e-3 + 2e-3 - 4e-4));
}

TEST_CASE("fp8 tolerance: exact and modelled outputs pass", "[kernels][fp8][tolerance]") {
    for (const auto& p : inputs().problems) {
        INFO(p.label);
        const auto exact = judge_gemm_fp8(p, as_float(p.exact));
        CHECK(exact.problem.empty());
        const auto modelled = judge_gemm_fp8(p, modelled_gemm_fp8(p));
        CHECK(modelled.problem.empty());
        CHECK(modelled.error == Approx(p.accumulation_error));
        // The sweeps sum one product per element: the model is exact there.
        if (p.label.find("every") != std::string::npos) CHECK(p.accumulation_error <= 0x1p-22);
        else CHECK(p.accumulation_error > 1e-6);
    }
}

TEST_CASE("fp8 tolerance: a coarser accumulator, a wrong row, a lost scale or flushed subnormals fail",
          "[kernels][fp8][tolerance]") {
    const auto& moderate = problem_with("moderate", Fp8Format::e4m3, Fp8Format::e4m3);
    Fp8AccumulatorModel coarse;
    coarse.fraction_bits = 8;
    CHECK_FALSE(judge_gemm_fp8(moderate, modelled_gemm_fp8(moderate, coarse)).problem.empty());
    // Accumulating a whole row in the tensor cores (no promotion) is also too coarse.
    Fp8AccumulatorModel unpromoted;
    unpromoted.promotion_interval = 1 << 20;
    unpromoted.fraction_bits = 10;
    CHECK_FALSE(judge_gemm_fp8(moderate, modelled_gemm_fp8(moderate, unpromoted)).problem.empty());

    for (const auto& p : inputs().problems) {
        INFO(p.label);
        auto flipped = as_float(p.exact);
        for (int col = 0; col < p.n; ++col) flipped[col] = -flipped[col] - 1.f;  // the planted wrong result
        CHECK_FALSE(judge_gemm_fp8(p, flipped).problem.empty());
        auto unscaled = as_float(p.exact);
        for (auto& x : unscaled) x /= p.scale;
        CHECK_FALSE(judge_gemm_fp8(p, unscaled).problem.empty());
    }

    // A kernel that reads subnormal inputs as zero fails the sweep exactly there.
    for (const Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
        const auto& sweep = problem_with("code of a", format, format);
        auto flushed = as_float(sweep.exact);
        const int mantissa_bits = format == Fp8Format::e4m3 ? 3 : 2;
        for (int i = 0; i < sweep.m * sweep.k; ++i)
            if ((sweep.a[i] & 0x7F) >> mantissa_bits == 0) flushed[i] = 0.f;  // column i % 32 of row i / 32
        const auto verdict = judge_gemm_fp8(sweep, flushed);
        INFO(verdict.problem);
        CHECK_FALSE(verdict.problem.empty());
    }
}

TEST_CASE("fp8 judgement names unwritten and NaN elements", "[kernels][fp8][tolerance]") {
    const auto& p = problem_with("full range", Fp8Format::e5m2, Fp8Format::e5m2);
    auto output = as_float(p.exact);
    output[5] = std::bit_cast<float>(0xFFFFFFFFu);
    CHECK(judge_gemm_fp8(p, output).problem == fmt::format("1 of {} output elements were never written", output.size()));
    output[5] = NAN;
    CHECK(judge_gemm_fp8(p, output).problem == "1 output elements are NaN");
    output.pop_back();
    CHECK_FALSE(judge_gemm_fp8(p, output).problem.empty());
}

TEST_CASE("fp8 sampled judgement: every element written, samples within the modelled bound", "[kernels][fp8]") {
    const auto& p = problem_with("moderate", Fp8Format::e5m2, Fp8Format::e4m3);
    const auto modelled = modelled_gemm_fp8(p);
    const std::vector<std::size_t> samples = {0, 17, 300, 1000};
    std::vector<double> exact;
    std::vector<float> modelled_samples;
    for (auto at : samples) {
        exact.push_back(p.exact[at]);
        modelled_samples.push_back(modelled[at]);
    }
    CHECK(judge_gemm_fp8_samples("s", modelled, samples, exact, modelled_samples).problem.empty());
    auto broken = modelled;
    broken[2] = std::bit_cast<float>(0xFFFFFFFFu);  // not a sample, still found
    CHECK_THAT(judge_gemm_fp8_samples("s", broken, samples, exact, modelled_samples).problem,
               Catch::Contains("never written"));
    broken = modelled;
    broken[17] = -broken[17] - 1.f;
    CHECK_THAT(judge_gemm_fp8_samples("s", broken, samples, exact, modelled_samples).problem,
               Catch::Contains("> tolerance"));
}
