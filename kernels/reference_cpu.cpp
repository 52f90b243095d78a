#include "reference_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "parallel_for.h"

namespace provision::kernels {

namespace {

// scores[j] = scale * query . key_j for the first scores.size() keys (rows of
// `dim` floats from `keys`), each dot product summed in d's order.  Four
// keys at a time: independent sums keep the adder busy.
void scaled_scores(const float* query, const float* keys, std::size_t dim, double scale, std::vector<double>& scores) {
    std::size_t j = 0;
    for (; j + 4 <= scores.size(); j += 4) {
        const float *k0 = keys + j * dim, *k1 = k0 + dim, *k2 = k1 + dim, *k3 = k2 + dim;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (std::size_t d = 0; d < dim; ++d) {
            const double x = query[d];
            s0 += x * static_cast<double>(k0[d]);
            s1 += x * static_cast<double>(k1[d]);
            s2 += x * static_cast<double>(k2[d]);
            s3 += x * static_cast<double>(k3[d]);
        }
        scores[j] = s0 * scale, scores[j + 1] = s1 * scale, scores[j + 2] = s2 * scale, scores[j + 3] = s3 * scale;
    }
    for (; j < scores.size(); ++j) {
        double dot = 0;
        for (std::size_t d = 0; d < dim; ++d) dot += static_cast<double>(query[d]) * static_cast<double>(keys[j * dim + d]);
        scores[j] = dot * scale;
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
            scaled_scores(&q[base + i * dim], &k[base], dim, problem.scale, scores);
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
        [&](std::size_t row) {
            const float* a_row = &a[row * depth];
            std::size_t col = 0;
            // Four columns at a time: four independent sums keep the adder
            // busy, each still summed in k's order, so every element is the
            // one gemm_reference_element gives.
            for (; col + 4 <= columns; col += 4) {
                const float* b0 = &b[col * depth];
                const float *b1 = b0 + depth, *b2 = b1 + depth, *b3 = b2 + depth;
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (std::size_t i = 0; i < depth; ++i) {
                    const double x = a_row[i];
                    s0 += x * static_cast<double>(b0[i]);
                    s1 += x * static_cast<double>(b1[i]);
                    s2 += x * static_cast<double>(b2[i]);
                    s3 += x * static_cast<double>(b3[i]);
                }
                double* out = &c[row * columns + col];
                out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
            }
            for (; col < columns; ++col) c[row * columns + col] = gemm_reference_element(a_row, &b[col * depth], k);
        },
        columns * depth);
    return c;
}

}  // namespace provision::kernels
