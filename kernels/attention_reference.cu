// The plain attention the fused kernels are compared with: one warp per
// query row, two passes over the keys (maximum and sum, then the weighted
// values), no tiling and no tensor cores.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernel_launchers.h"
#include "kernel_loading.h"

namespace provision::kernels::detail {
namespace {

constexpr int kMaxHeadDim = 128;
constexpr int kPerLane = kMaxHeadDim / 32;

__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float round_to(__half, float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float round_to(__nv_bfloat16, float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

template <typename T, bool kInputPrecision>
__global__ void attention_reference_kernel(const T* q, const T* k, const T* v, float* o, int rows, int seq_len,
                                           int head_dim, bool causal, float scale) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const size_t base = static_cast<size_t>(row / seq_len) * seq_len * head_dim;
    const int i = row % seq_len;

    float query[kPerLane];
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
        const int d = lane + 32 * c;
        query[c] = d < head_dim ? to_float(q[base + static_cast<size_t>(i) * head_dim + d]) : 0.f;
    }
    // A framework computing in T stores q.k^T in T, then the scaled scores in T.
    auto score = [&](int j) {
        float dot = 0.f;
#pragma unroll
        for (int c = 0; c < kPerLane; ++c) {
            const int d = lane + 32 * c;
            if (d < head_dim) dot = fmaf(query[c], to_float(k[base + static_cast<size_t>(j) * head_dim + d]), dot);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        if (kInputPrecision) return round_to(T{}, round_to(T{}, dot) * scale);
        return dot * scale;
    };

    const int keys = causal ? i + 1 : seq_len;
    float top = -INFINITY, sum = 0.f;
    for (int j = 0; j < keys; ++j) {
        const float s = score(j);
        const float new_top = fmaxf(top, s);
        sum = sum * expf(top - new_top) + expf(s - new_top);
        top = new_top;
    }
    float acc[kPerLane] = {};
    for (int j = 0; j < keys; ++j) {
        float weight = expf(score(j) - top) / sum;
        if (kInputPrecision) weight = round_to(T{}, weight);
#pragma unroll
        for (int c = 0; c < kPerLane; ++c) {
            const int d = lane + 32 * c;
            if (d < head_dim) acc[c] = fmaf(weight, to_float(v[base + static_cast<size_t>(j) * head_dim + d]), acc[c]);
        }
    }
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
        const int d = lane + 32 * c;
        if (d < head_dim)
            o[base + static_cast<size_t>(i) * head_dim + d] = kInputPrecision ? round_to(T{}, acc[c]) : acc[c];
    }
}

template <typename T>
cudaError_t launch_typed(bool input_precision, const void* q, const void* k, const void* v, float* o,
                         const AttentionProblem& problem, int pairs, cudaStream_t stream) {
    const int rows = pairs * problem.seq_len;
    constexpr int kThreads = 256;
    const int blocks = (rows * 32 + kThreads - 1) / kThreads;
    const auto* qt = static_cast<const T*>(q);
    const auto* kt = static_cast<const T*>(k);
    const auto* vt = static_cast<const T*>(v);
    const auto kernel = input_precision ? attention_reference_kernel<T, true> : attention_reference_kernel<T, false>;
    if (loading_kernels()) return load_kernel(kernel);
    kernel<<<blocks, kThreads, 0, stream>>>(qt, kt, vt, o, rows, problem.seq_len, problem.head_dim, problem.causal,
                                            problem.scale);
    return cudaGetLastError();
}

// An output element as the host decodes it (bits_to_float), in double.
template <typename T>
__device__ __forceinline__ double decode(std::uint16_t bits);
template <>
__device__ __forceinline__ double decode<__half>(std::uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
}
template <>
__device__ __forceinline__ double decode<__nv_bfloat16>(std::uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
}

// ErrorExtent's two maxima (tolerance.h), the same arithmetic in double.
struct Extent {
    double worst = 0, scale = 0;
    unsigned nan = 0;
    __device__ void add(double out, double ref) {
        const double difference = fabs(out - ref);
        const double magnitude = fabs(ref);
        nan |= isnan(difference) || isnan(magnitude);
        worst = difference > worst ? difference : worst;
        scale = magnitude > scale ? magnitude : scale;
    }
    __device__ void merge_down(int offset) {
        worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, offset));
        scale = fmax(scale, __shfl_down_sync(0xffffffffu, scale, offset));
        nan |= __shfl_down_sync(0xffffffffu, nan, offset);
    }
    __device__ void publish(unsigned long long* worst_bits, unsigned long long* scale_bits, unsigned* nan_flag) const {
        atomicMax(worst_bits, static_cast<unsigned long long>(__double_as_longlong(worst)));
        atomicMax(scale_bits, static_cast<unsigned long long>(__double_as_longlong(scale)));
        if (nan) atomicOr(nan_flag, 1u);
    }
};

template <typename T>
__global__ void attention_tally_kernel(const std::uint16_t* output, const float* reference32,
                                       const float* reference_low, std::size_t count, AttentionTally* tally) {
    unsigned long long unwritten = 0, nan = 0;
    Extent kernel, input;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::uint16_t bits = output[i];
        const double out = decode<T>(bits);
        if (bits == kPoison16) ++unwritten;  // itself a NaN
        else if (isnan(out)) ++nan;
        kernel.add(out, reference32[i]);
        input.add(reference_low[i], reference32[i]);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
        nan += __shfl_down_sync(0xffffffffu, nan, offset);
        kernel.merge_down(offset);
        input.merge_down(offset);
    }
    if (threadIdx.x % 32 != 0) return;
    if (unwritten) atomicAdd(&tally->unwritten, unwritten);
    if (nan) atomicAdd(&tally->nan, nan);
    kernel.publish(&tally->kernel_worst, &tally->kernel_scale, &tally->kernel_nan);
    input.publish(&tally->input_worst, &tally->input_scale, &tally->input_nan);
}

}  // namespace

cudaError_t launch_attention_tally(ElementType type, const std::uint16_t* output, const float* reference32,
                                   const float* reference_low, std::size_t count, AttentionTally* tally,
                                   cudaStream_t stream) {
    const auto kernel =
        type == ElementType::fp16 ? attention_tally_kernel<__half> : attention_tally_kernel<__nv_bfloat16>;
    if (loading_kernels()) return load_kernel(kernel);
    if (count == 0) return cudaSuccess;
    constexpr int kThreads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 1024));
    kernel<<<blocks, kThreads, 0, stream>>>(output, reference32, reference_low, count, tally);
    return cudaGetLastError();
}

cudaError_t launch_attention_reference(ElementType type, bool input_precision, const void* q, const void* k,
                                       const void* v, float* o, const AttentionProblem& problem, int pairs,
                                       cudaStream_t stream) {
    if (problem.head_dim < 1 || problem.head_dim > kMaxHeadDim || pairs < 1) return cudaErrorInvalidValue;
    return type == ElementType::fp16
               ? launch_typed<__half>(input_precision, q, k, v, o, problem, pairs, stream)
               : launch_typed<__nv_bfloat16>(input_precision, q, k, v, o, problem, pairs, stream);
}

}  // namespace provision::kernels::detail
