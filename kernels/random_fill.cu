// Random inputs drawn on the GPU (large shapes would take seconds on the
// host), and the spinning kernel of the planted hang.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernel_launchers.h"
#include "kernel_loading.h"
#include "mma_primitives.cuh"

namespace provision::kernels::detail {
namespace {

// splitmix64's finaliser: a counter hashed this way is a good enough stream
// of independent uniform bits for test inputs.
__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ void store(__half* out, float x) { *out = __float2half_rn(x); }
__device__ __forceinline__ void store(__nv_bfloat16* out, float x) { *out = __float2bfloat16_rn(x); }
__device__ __forceinline__ void store(float* out, float x) { *out = x; }

template <typename T>
__global__ void fill_normal_kernel(T* out, std::size_t count, std::uint64_t seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const std::uint64_t bits = mix(seed ^ mix(i));
        const float u1 = (static_cast<float>(bits >> 40) + 1.f) * 0x1p-24f;  // (0, 1]
        const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFu) * 0x1p-24f;
        store(out + i, sqrtf(-2.f * logf(u1)) * cospif(2.f * u2));  // Box-Muller
    }
}

__global__ void fill_fp8_kernel(Fp8Format format, Fp8Spread spread, std::uint8_t* out, std::size_t count,
                                std::uint64_t seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = random_fp8_code(format, spread, random_bits(seed, i));
}

#if PROVISION_FAULT_INJECTION
__global__ void spin_kernel() { spin_forever(); }
#endif

template <typename T>
cudaError_t fill(T* out, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
    constexpr int kThreads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
    const auto kernel = fill_normal_kernel<T>;
    if (loading_kernels()) return load_kernel(kernel);
    kernel<<<std::max(blocks, 1u), kThreads, 0, stream>>>(out, count, seed);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fill_normal(ElementType type, void* out, std::size_t count, std::uint64_t seed,
                               cudaStream_t stream) {
    return type == ElementType::fp16 ? fill(static_cast<__half*>(out), count, seed, stream)
                                     : fill(static_cast<__nv_bfloat16*>(out), count, seed, stream);
}

cudaError_t launch_fill_normal_float(float* out, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
    return fill(out, count, seed, stream);
}

cudaError_t launch_fill_fp8(Fp8Format format, Fp8Spread spread, std::uint8_t* out, std::size_t count,
                            std::uint64_t seed, cudaStream_t stream) {
    constexpr int kThreads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
    if (loading_kernels()) return load_kernel(fill_fp8_kernel);
    fill_fp8_kernel<<<std::max(blocks, 1u), kThreads, 0, stream>>>(format, spread, out, count, seed);
    return cudaGetLastError();
}

#if PROVISION_FAULT_INJECTION  // callers reach it only through planted(), never in a release build
cudaError_t launch_spin_forever(cudaStream_t stream) {
    if (loading_kernels()) return load_kernel(spin_kernel);
    spin_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}
#endif

}  // namespace provision::kernels::detail
