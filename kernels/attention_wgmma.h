// kernels/attention_wgmma.h — internal to kernels/, no CUDA headers
#pragma once
namespace provision::kernels::detail {
struct AttentionProblem { int batch; int heads; int seq_len; int head_dim; bool causal; float scale; };
// q, k, v, o: device pointers to bf16 [batch, heads, seq_len, head_dim]; stream: a cudaStream_t passed as void*.
// Returns a cudaError_t value as int (0 = success). Only valid on sm_90 devices; head_dim 64 or 128.
int launch_attention_bf16_wgmma(const void* q, const void* k, const void* v, void* o, const AttentionProblem& problem, void* stream, bool inject_wrong_result);
}
