// Thin wrappers over the PTX instructions the kernels are built from:
// ldmatrix, mma.sync, cp.async and the fast exp2.  Each wrapper names the
// first architecture that has the instruction; code for older targets either
// falls back to an equivalent sequence or traps (the host never launches it
// there).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace provision::kernels::detail {

// A planted hang: spins forever with a side effect the compiler must keep.
__device__ __forceinline__ void spin_forever() {
    for (;;) asm volatile("nanosleep.u32 1000000;");
}

__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8x8 matrices of 16-bit elements from shared memory (sm_75+).  Lanes
// 8i ... 8i+7 give the row addresses of matrix i; each thread receives
// elements (lane / 4, 2 * (lane % 4) + {0, 1}) of every matrix.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// The same, each matrix transposed on the way (for row-major B operands).
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// 16 bytes global -> shared; zero-filled when !valid.  cp.async (sm_80+)
// does not occupy registers and lets the copy overlap compute; older targets
// copy through registers.
__device__ __forceinline__ void copy_16_bytes(void* shared, const void* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)), "l"(global),
                 "r"(valid ? 16 : 0));
#else
    *static_cast<uint4*>(shared) = valid ? *static_cast<const uint4*>(global) : make_uint4(0, 0, 0, 0);
#endif
}

__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `pending` committed copy groups are still in flight.
template <int pending>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
#endif
}

// D += A * B for one 16x8x16 tile, fp32 accumulators.  A: 4 registers of
// 2 elements (rows g, g+8; columns 2q.., 2q+8..), B: 2 registers.
template <typename T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                            std::uint32_t b1);

template <>
__device__ __forceinline__ void mma_16x8x16<__half>(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                    std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    // Turing has the fp16 m16n8k8 shape only: two of them make one k16 step.
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b0));
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[2]), "r"(a[3]), "r"(b1));
#endif
}

template <>
__device__ __forceinline__ void mma_16x8x16<__nv_bfloat16>(float (&d)[4], const std::uint32_t (&a)[4],
                                                           std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // bf16 tensor cores start with sm_80; the host never launches this
#endif
}

// D += A * B for one 16x8x8 TF32 tile (sm_80+).  A: rows g, g+8 at columns
// q and q+4; B: rows q and q+4 at column g.
__device__ __forceinline__ void mma_16x8x8_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();
#endif
}

// float -> TF32 bits, round to nearest, ties away (what cuBLAS does too).
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t float_bits) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    std::uint32_t result;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(result) : "f"(__uint_as_float(float_bits)));
    return result;
#else
    return float_bits;
#endif
}

// 2^x through the special-function unit (about 2 ulp; exp2(-inf) = 0).
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// Two floats packed as one register of two 16-bit elements, the first in the
// low half (the lower column of an mma fragment).
template <typename T>
__device__ __forceinline__ std::uint32_t pack2(float low, float high);

template <>
__device__ __forceinline__ std::uint32_t pack2<__half>(float low, float high) {
    const __half2 packed = __floats2half2_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&packed);
}

template <>
__device__ __forceinline__ std::uint32_t pack2<__nv_bfloat16>(float low, float high) {
    const __nv_bfloat162 packed = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&packed);
}

}  // namespace provision::kernels::detail
