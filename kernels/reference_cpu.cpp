#include "reference_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "parallel_for.h"

namespace provision::kernels {

namespace {

// out[j] = x . row j for the `count` rows of `length` floats from `rows`,
// each summed in index order (as gemm_reference_element sums), four rows
// at a time: independent sums keep the adder busy.
void dots(const float* x, const float* rows, std::size_t count, std::size_t length, double* out) {
    std::size_t j = 0;
    for (; j + 4 <= count; j += 4) {
        const float *r0 = rows + j * length, *r1 = r0 + length, *r2 = r1 + length, *r3 = r2 + length;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (std::size_t i = 0; i < length; ++i) {
            const double v = x[i];
            s0 += v * static_cast<double>(r0[i]);
            s1 += v * static_cast<double>(r1[i]);
            s2 += v * static_cast<double>(r2[i]);
            s3 += v * static_cast<double>(r3[i]);
        }
        out[j] = s0, out[j + 1] = s1, out[j + 2] = s2, out[j + 3] = s3;
    }
    for (; j < count; ++j) {
        double sum = 0;
        const float* r = rows + j * length;
        for (std::size_t i = 0; i < length; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(r[i]);
        out[j] = sum;
    }
}

}  // namespace

std::vector<double> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, const AttentionProblem& problem) {
    const std::size_t seq = static_cast<std::size_t>(problem.seq_len);
    const std::size_t dim = static_cast<std::size_t>(problem.head_dim);
    const std::size_t pairs = static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.heads);
    std::vector<double> out(pairs * seq * dim, 0.0);
    parallel_for(
        pairs * seq,
        [&](std::size_t row_index) {
            const std::size_t bh = row_index / seq, i = row_index % seq;
            const std::size_t base = bh * seq * dim;
            std::vector<double> scores(problem.causal ? i + 1 : seq);
            dots(&q[base + i * dim], &k[base], scores.size(), dim, scores.data());
            for (double& score : scores) score *= static_cast<double>(problem.scale);
            const double top = *std::max_element(scores.begin(), scores.end());
            double sum = 0;
            for (double& score : scores) {
                score = std::exp(score - top);
                sum += score;
            }
            double* row = &out[base + i * dim];
            for (std::size_t j = 0; j < scores.size(); ++j) {
                const double weight = scores[j] / sum;
                for (std::size_t d = 0; d < dim; ++d) row[d] += weight * static_cast<double>(v[base + j * dim + d]);
            }
        },
        seq * dim * 2);
    return out;
}

double gemm_reference_element(const float* a_row, const float* b_row, int k) {
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += static_cast<double>(a_row[i]) * static_cast<double>(b_row[i]);
    return sum;
}

std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
    std::vector<double> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    const auto columns = static_cast<std::size_t>(n), depth = static_cast<std::size_t>(k);
    parallel_for(
        static_cast<std::size_t>(m),
        [&](std::size_t row) { dots(a.data() + row * depth, b.data(), columns, depth, c.data() + row * columns); },
        columns * depth);
    return c;
}

}  // namespace provision::kernels
