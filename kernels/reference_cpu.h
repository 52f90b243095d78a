// Plain fp64 references on the CPU, for the small shapes the checks run.
// Slow and obvious on purpose: they are what the kernels are judged against.
#pragma once

#include <vector>

#include "attention_problem.h"

namespace provision::kernels {

using detail::AttentionProblem;

// o[b,h,i,:] = sum_j softmax_j(scale * q_i . k_j) v_j over [batch, heads,
// seq_len, head_dim] tensors, keys j > i masked out when causal.
std::vector<double> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, const AttentionProblem& problem);

// c[m, n] = sum_k a[m, k] * b[n, k]: both operands row-major with K contiguous.
std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k);

// One element of the same product, for spot checks of large shapes.
double gemm_reference_element(const float* a_row, const float* b_row, int k);

}  // namespace provision::kernels
