// C = (A B^T) * scale on Hopper's fp8 tensor cores through the warpgroup
// matrix instructions (wgmma m64n128k32, e4m3 and e5m2 in either slot), for
// sm_90a: the path cuBLASLt, CUTLASS and DeepGEMM take for fp8 on Hopper.
//
// One CTA computes a 128x128 tile of C with three warpgroups:
//   warpgroup 0   producer: one thread streams 128-deep k-slices of A and B
//                 (128 rows each, one 128-byte row per tile row) through a
//                 ring of four shared-memory stages (TMA, 128-byte swizzle,
//                 completion on mbarriers);
//   warpgroups 1-2 consumers: 64 rows each.  Per k-slice, four wgmma k32
//                 (both operands K-major in shared memory, the only layout
//                 fp8 wgmma reads) chain into a fresh accumulator, which is
//                 then added to fp32 registers: the tensor cores keep only
//                 about 13 fraction bits inside a chain (gemm_fp8_host.h),
//                 so the chain is never longer than 128 products.
// The CTA, the ring, the producer and the output code are the skeleton's
// (hopper_skeleton.cuh), shared with gemm_tf32_wgmma.cu: a 128-byte swizzle
// row holds 32 floats there and 128 codes here, and one k32 fp8 instruction
// reads 32 bytes of it, as one k8 TF32 instruction does.
//
// The device code exists only in the sm_90a pass; every other target gets a
// kernel that traps, and the launcher refuses devices that are not sm_90.
#include <cuda.h>  // CUtensorMap and its enums
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8_dispatch.h"
#include "hopper_skeleton.cuh"
#include "kernel_launchers.h"
#include "tensor_map.h"

namespace provision::kernels::detail {
namespace {

// 128-deep k-slices: 128 bytes = codes, one swizzle row; four stages.
using Pipeline = GemmPipeline<128, 128, 128, 1, 4, false>;
constexpr int kBlockK = Pipeline::kBlockK;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

#define WGMMA_FP8_M64N128K32(TYPES)                                                                            \
    asm volatile(                                                                                              \
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"                                                        \
        " wgmma.mma_async.sync.aligned.m64n128k32.f32." TYPES " "                                             \
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
        "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "  \
        "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
        "%62, %63}, %64, %65, p, 1, 1;\n}\n"                                                                  \
        : PROVISION_WGMMA_ACC64(d, 0)                                                                          \
        : "l"(a), "l"(b), "r"(accumulate))

// D[64x128] (+)= A[64x32] · B[32x128], both from shared memory, K-major;
// accumulate = 0 starts from zero (the instruction's scale-d).
template <Fp8Format A, Fp8Format B>
__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (A == Fp8Format::e4m3 && B == Fp8Format::e4m3) WGMMA_FP8_M64N128K32("e4m3.e4m3");
    else if constexpr (A == Fp8Format::e4m3) WGMMA_FP8_M64N128K32("e4m3.e5m2");
    else if constexpr (B == Fp8Format::e4m3) WGMMA_FP8_M64N128K32("e5m2.e4m3");
    else WGMMA_FP8_M64N128K32("e5m2.e5m2");
}

#undef WGMMA_FP8_M64N128K32

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <Fp8Format A, Fp8Format B>
__global__ void __launch_bounds__(kWarpSpecializedThreads, 1)
    gemm_fp8_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                          float* c, int m, int n, int k, float scale, FaultKind fault) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (planted(fault, FaultKind::hang)) spin_forever();
    extern __shared__ uint8_t smem_raw[];
    const Pipeline st = Pipeline::of_cta(smem_raw, m, n, k);

    warp_specialized<kProducerRegs, kConsumerRegs>(
        [&] { st.init_barriers(); },
        [&] {
            if (threadIdx.x == 0) st.produce(&a_map, &b_map);
        },
        [&](int consumer) {
            const int lane = threadIdx.x % 32;
            float acc[64];
            float slice[64];
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] = slice[i] = 0.f;

            for (int kt = 0; kt < st.k_tiles; ++kt) {
                const int s = Pipeline::Ring::stage(kt);
                mbar_wait(st.full(s), Pipeline::Ring::parity(kt));
                const uint64_t a_desc = smem_desc_sw128(st.a(s) + consumer * 64 * 128, 16, 1024);
                const uint64_t b_desc = smem_desc_sw128(st.b(s), 16, 1024);
                warpgroup_fence_operand(slice);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < kBlockK / 32; ++kk) {
                    // 32 codes = 32 bytes along the swizzled row: +2 in 16-byte units.
                    wgmma_m64n128k32<A, B>(slice, a_desc + 2 * kk, b_desc + 2 * kk, kk > 0);
                }
                wgmma_commit();
                wgmma_wait<0>();
                warpgroup_fence_operand(slice);
                if (lane == 0) mbar_arrive(st.empty(s));  // the stage's operands are read: refill it
#pragma unroll
                for (int i = 0; i < 64; ++i) acc[i] += slice[i];
            }

            store_fp32_fragment(acc, c, m, n, st.m0 + consumer * 64, st.n0,
                                [&](int row, int, float& first, float& second) {
                                    first *= scale;
                                    second *= scale;
                                    if (planted(fault, FaultKind::wrong_result) && row == 0) {
                                        first = -first - 1.f;
                                        second = -second - 1.f;
                                    }
                                });
        });
#elif defined(__CUDA_ARCH__)
    __trap();  // built for a target without wgmma: never run silently
#endif
}

// ---- host side ----------------------------------------------------------------

// A row-major [rows, k] code matrix in boxes of 128 codes x 128 rows,
// 128-byte swizzle; reads outside it give zeros (0.0 in both formats).
cudaError_t make_tensor_map(CUtensorMap* map, const std::uint8_t* data, int rows, int k) {
    return encode_matrix_sw128(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, data, rows, k, kBlockK, 128);
}

}  // namespace

cudaError_t launch_gemm_fp8_wgmma(Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a,
                                  const std::uint8_t* b, float* c, int m, int n, int k, float scale,
                                  cudaStream_t stream, FaultKind fault) {
    int device = 0;
    if (cudaError_t e = current_sm90_device(device); e != cudaSuccess) return e;
    // TMA needs 16-byte aligned rows: k a multiple of 16 and aligned bases.
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
    if (m < 1 || n < 1 || k < 16 || k % 16 != 0 || !aligned) return cudaErrorInvalidValue;
    CUtensorMap a_map, b_map;
    if (cudaError_t e = make_tensor_map(&a_map, a, m, k); e != cudaSuccess) return e;
    if (cudaError_t e = make_tensor_map(&b_map, b, n, k); e != cudaSuccess) return e;
    dim3 grid;
    if (cudaError_t e = gemm_grid(m, n, Pipeline::kBlockM, Pipeline::kBlockN, grid); e != cudaSuccess) return e;
    return with_fp8_formats(a_format, b_format, [&](auto a_tag, auto b_tag) {
        return launch_warp_specialized(gemm_fp8_wgmma_kernel<decltype(a_tag)::value, decltype(b_tag)::value>, grid,
                                       Pipeline::kSharedBytes, stream, a_map, b_map, c, m, n, k, scale, fault);
    });
}

}  // namespace provision::kernels::detail
