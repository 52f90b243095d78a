// One fused attention forward: the shape every attention kernel, reference
// and check of kernels/ takes.  Plain C++, no CUDA header.
#pragma once

namespace provision::kernels::detail {

// q, k, v, o: [batch, heads, seq_len, head_dim], row-major; softmax of
// scale · q kᵀ, with keys after the query masked when causal.
struct AttentionProblem {
    int batch;
    int heads;
    int seq_len;
    int head_dim;
    bool causal;
    float scale;
};

}  // namespace provision::kernels::detail
