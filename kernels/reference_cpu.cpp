#include "reference_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "parallel_for.h"

namespace provision::kernels {

std::vector<double> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, const AttentionProblem& problem) {
    const std::size_t seq = static_cast<std::size_t>(problem.seq_len);
    const std::size_t dim = static_cast<std::size_t>(problem.head_dim);
    const std::size_t pairs = static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.heads);
    std::vector<double> out(pairs * seq * dim, 0.0);
    parallel_for(pairs * seq, [&](std::size_t row_index) {
        const std::size_t bh = row_index / seq, i = row_index % seq;
        const std::size_t base = bh * seq * dim;
        const std::size_t keys = problem.causal ? i + 1 : seq;
        std::vector<double> scores(keys);
        double top = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < keys; ++j) {
            double dot = 0;
            for (std::size_t d = 0; d < dim; ++d)
                dot += static_cast<double>(q[base + i * dim + d]) * static_cast<double>(k[base + j * dim + d]);
            scores[j] = dot * static_cast<double>(problem.scale);
            top = std::max(top, scores[j]);
        }
        double sum = 0;
        for (std::size_t j = 0; j < keys; ++j) {
            scores[j] = std::exp(scores[j] - top);
            sum += scores[j];
        }
        double* row = &out[base + i * dim];
        for (std::size_t j = 0; j < keys; ++j) {
            const double weight = scores[j] / sum;
            for (std::size_t d = 0; d < dim; ++d) row[d] += weight * static_cast<double>(v[base + j * dim + d]);
        }
    });
    return out;
}

double gemm_reference_element(const float* a_row, const float* b_row, int k) {
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += static_cast<double>(a_row[i]) * static_cast<double>(b_row[i]);
    return sum;
}

std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
    std::vector<double> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    parallel_for(static_cast<std::size_t>(m), [&](std::size_t row) {
        for (int col = 0; col < n; ++col)
            c[row * n + col] = gemm_reference_element(&a[row * k], &b[static_cast<std::size_t>(col) * k], k);
    });
    return c;
}

}  // namespace provision::kernels
