#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "reference_cpu.h"

using namespace provision::kernels;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal;
    std::vector<float> values(n);
    for (auto& x : values) x = normal(generator);
    return values;
}

}  // namespace

TEST_CASE("attention reference: equal scores average the values", "[kernels][reference]") {
    // All keys equal, so every query sees a uniform softmax over its keys.
    const AttentionProblem problem{1, 1, 4, 2, false, 0.5f};
    const std::vector<float> q = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<float> k(8, 1.0f);
    const std::vector<float> v = {1, 10, 2, 20, 3, 30, 6, 60};
    const auto o = attention_reference(q, k, v, problem);
    for (int i = 0; i < 4; ++i) {
        CHECK(o[i * 2] == Approx(3.0));
        CHECK(o[i * 2 + 1] == Approx(30.0));
    }
}

TEST_CASE("attention reference: the causal mask limits each query to earlier keys", "[kernels][reference]") {
    const AttentionProblem problem{1, 1, 3, 1, true, 1.0f};
    const std::vector<float> q(3, 0.0f);  // zero scores: uniform over the allowed keys
    const std::vector<float> k(3, 0.0f);
    const std::vector<float> v = {3, 6, 9};
    const auto o = attention_reference(q, k, v, problem);
    CHECK(o[0] == Approx(3.0));
    CHECK(o[1] == Approx(4.5));
    CHECK(o[2] == Approx(6.0));
}

TEST_CASE("attention reference matches softmax computed by hand", "[kernels][reference]") {
    const AttentionProblem problem{2, 3, 5, 4, false, 0.7f};
    const std::size_t n = 2 * 3 * 5 * 4;
    const auto q = random_values(n, 1), k = random_values(n, 2), v = random_values(n, 3);
    const auto o = attention_reference(q, k, v, problem);
    // (b=1, h=2, i=3) written out from the definition.
    const std::size_t base = (1 * 3 + 2) * 5 * 4;
    double weights[5], sum = 0;
    for (int j = 0; j < 5; ++j) {
        double dot = 0;
        for (int d = 0; d < 4; ++d) dot += double(q[base + 3 * 4 + d]) * double(k[base + j * 4 + d]);
        weights[j] = std::exp(double(0.7f) * dot);
        sum += weights[j];
    }
    for (int d = 0; d < 4; ++d) {
        double expected = 0;
        for (int j = 0; j < 5; ++j) expected += weights[j] / sum * double(v[base + j * 4 + d]);
        CHECK(o[base + 3 * 4 + d] == Approx(expected).epsilon(1e-12));
    }
}

TEST_CASE("attention reference: every row, causal or not, is the softmax written out", "[kernels][reference]") {
    // 11 keys: whole groups of four and the remainder, for every query row.
    for (const bool causal : {false, true}) {
        const AttentionProblem problem{1, 2, 11, 3, causal, 0.6f};
        const std::size_t n = 2 * 11 * 3;
        const auto q = random_values(n, 4), k = random_values(n, 5), v = random_values(n, 6);
        const auto o = attention_reference(q, k, v, problem);
        int off = 0;
        for (std::size_t base : {std::size_t{0}, std::size_t{33}})
            for (int i = 0; i < 11; ++i) {
                const int keys = causal ? i + 1 : 11;
                std::vector<double> weights(keys);
                double sum = 0;
                for (int j = 0; j < keys; ++j) {
                    double dot = 0;
                    for (int d = 0; d < 3; ++d) dot += double(q[base + i * 3 + d]) * double(k[base + j * 3 + d]);
                    weights[j] = std::exp(double(0.6f) * dot);
                    sum += weights[j];
                }
                for (int d = 0; d < 3; ++d) {
                    double expected = 0;
                    for (int j = 0; j < keys; ++j) expected += weights[j] / sum * double(v[base + j * 3 + d]);
                    off += std::fabs(o[base + i * 3 + d] - expected) > 1e-12 * std::max(1.0, std::fabs(expected));
                }
            }
        CHECK(off == 0);
    }
}

TEST_CASE("attention reference stays finite for large scores", "[kernels][reference]") {
    const AttentionProblem problem{1, 1, 2, 1, false, 1.0f};
    const std::vector<float> q = {1000, 1000}, k = {1000, -1000}, v = {1, 2};
    const auto o = attention_reference(q, k, v, problem);
    CHECK(o[0] == Approx(1.0));  // the first key dominates completely
    CHECK(std::isfinite(o[1]));
}

TEST_CASE("gemm reference multiplies A by B transposed", "[kernels][reference]") {
    // a: 2x3, b: 2x3 (N x K), c = a b^T: 2x2
    const std::vector<float> a = {1, 2, 3, 4, 5, 6};
    const std::vector<float> b = {1, 0, 1, 0, 1, 0};
    const auto c = gemm_reference(a, b, 2, 2, 3);
    CHECK(c == std::vector<double>{4, 2, 10, 5});
    CHECK(gemm_reference_element(&a[3], &b[0], 3) == 10.0);
}

TEST_CASE("gemm reference: every element is the one its row and column give, summed in k's order",
          "[kernels][reference]") {
    // 7 columns: the four-at-a-time sums and the remainder's; 300 rows and
    // k = 257 are enough work to spread over threads.
    const int m = 300, n = 7, k = 257;
    const auto a = random_values(static_cast<std::size_t>(m) * k, 11);
    const auto b = random_values(static_cast<std::size_t>(n) * k, 12);
    const auto c = gemm_reference(a, b, m, n, k);
    REQUIRE(c.size() == static_cast<std::size_t>(m) * n);
    int differing = 0;
    for (int row = 0; row < m; ++row)
        for (int col = 0; col < n; ++col)
            differing += c[row * n + col] != gemm_reference_element(&a[row * k], &b[col * k], k);
    CHECK(differing == 0);
}
