#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "tolerance.h"

using namespace provision::kernels;

TEST_CASE("relative error is the worst difference over the largest reference value", "[kernels][tolerance]") {
    const std::vector<double> reference = {1.0, -4.0, 0.0, 2.0};
    CHECK(relative_error(std::vector<float>{1.0f, -4.0f, 0.0f, 2.0f}, reference) == 0.0);
    CHECK(relative_error(std::vector<float>{1.0f, -4.0f, 0.2f, 2.0f}, reference) == Approx(0.05));
    CHECK(relative_error(std::vector<float>{1.5f, -4.0f, 0.0f, 2.1f}, reference) == Approx(0.125));
}

TEST_CASE("relative error is NaN for NaN outputs and mismatched sizes", "[kernels][tolerance]") {
    const std::vector<double> reference = {1.0, 2.0};
    CHECK(std::isnan(relative_error(std::vector<float>{1.0f, NAN}, reference)));
    CHECK(std::isnan(relative_error(std::vector<float>{1.0f}, reference)));
    CHECK(std::isinf(relative_error(std::vector<float>{1.0f}, std::vector<double>{0.0})));
}

// What a check judges without copying: a prefix of an output, and stored
// values read through a view that converts each where it is read.
struct Halved {
    std::span<const int> stored;
    std::size_t size() const { return stored.size(); }
    double operator[](std::size_t i) const { return stored[i] / 2.0; }
};

TEST_CASE("relative error reads spans and views as it reads vectors", "[kernels][tolerance]") {
    const std::vector<double> reference = {1.0, -4.0, 2.0};
    const std::vector<float> output = {1.0f, -4.0f, 2.5f, 99.0f};
    CHECK(relative_error(std::span(output).first(3), reference) == Approx(0.125));
    CHECK(std::isnan(relative_error(std::span(output), reference)));  // sizes differ
    const std::vector<int> stored = {2, -8, 5};
    CHECK(relative_error(Halved{stored}, reference) == Approx(0.125));
}

TEST_CASE("error extents of chunks merge into the whole output's error, NaN included", "[kernels][tolerance]") {
    std::vector<double> reference(1000), output(1000);
    for (std::size_t i = 0; i < reference.size(); ++i) {
        reference[i] = std::sin(0.37 * static_cast<double>(i)) * static_cast<double>(i % 17);
        output[i] = reference[i] + ((i * 7919) % 13) * 1e-6;
    }
    const auto in_chunks = [&](std::size_t chunk) {
        ErrorExtent whole;
        for (std::size_t begin = 0; begin < output.size(); begin += chunk) {
            ErrorExtent part;
            for (std::size_t i = begin; i < std::min(begin + chunk, output.size()); ++i) part.add(output[i], reference[i]);
            whole.merge(part);
        }
        return whole.error();
    };
    const double one_pass = relative_error(output, reference);
    CHECK(one_pass > 0);
    CHECK(in_chunks(64) == one_pass);
    CHECK(in_chunks(999) == one_pass);
    output[700] = NAN;
    CHECK(std::isnan(in_chunks(64)));
    CHECK(ErrorExtent{}.error() == 0);
}

TEST_CASE("tolerance is twice the input-precision error plus the floor", "[kernels][tolerance]") {
    CHECK(tolerance_from(0.004, 1e-4) == Approx(0.0081));
    CHECK(tolerance_from(0.0, 1e-4) == Approx(1e-4));
    CHECK(std::isnan(tolerance_from(NAN, 1e-4)));
}

TEST_CASE("within_tolerance accepts errors up to the bound and never NaN", "[kernels][tolerance]") {
    CHECK(within_tolerance(0.008, tolerance_from(0.004, 0)));
    CHECK_FALSE(within_tolerance(0.0081, tolerance_from(0.004, 0)));
    CHECK_FALSE(within_tolerance(NAN, 1.0));
    CHECK_FALSE(within_tolerance(0.0, NAN));
    CHECK_FALSE(within_tolerance(INFINITY, INFINITY));
}
