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
// The layout is that of gemm_tf32_wgmma.cu: a 128-byte swizzle row holds 32
// floats there and 128 codes here, and one k32 fp8 instruction reads 32
// bytes of it, as one k8 TF32 instruction does.
//
// The device code exists only in the sm_90a pass; every other target gets a
// kernel that traps, and the launcher refuses devices that are not sm_90.
#include <cuda.h>  // CUtensorMap and its enums
#include <cuda_runtime.h>

#include <cstdint>

#include "hopper_primitives.cuh"
#include "kernel_launchers.h"
#include "mma_primitives.cuh"
#include "tensor_map.h"

namespace provision::kernels::detail {
namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;  // bytes = codes: one 128-byte swizzle row
constexpr int kStages = 4;
constexpr int kThreads = 384;  // producer + two consumer warpgroups

// One stage: the A slice then the B slice, each 1024-byte aligned as the
// 128-byte swizzle pattern (8 rows x 128 bytes) requires.
constexpr int kABytes = kBlockM * kBlockK;
constexpr int kBBytes = kBlockN * kBlockK;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kBarriers = kStages * kStageBytes;
constexpr int kBarrierCount = 2 * kStages;  // full[], empty[]
constexpr int kSharedBytes = kBarriers + kBarrierCount * 8 + 1024;  // + slack to align the base

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;  // 128·40 + 256·232 ≤ 64 Ki registers

#define ACC8(a, i) \
    "+f"(a[i]), "+f"(a[i + 1]), "+f"(a[i + 2]), "+f"(a[i + 3]), "+f"(a[i + 4]), "+f"(a[i + 5]), "+f"(a[i + 6]), \
        "+f"(a[i + 7])
#define ACC32(a, i) ACC8(a, i), ACC8(a, i + 8), ACC8(a, i + 16), ACC8(a, i + 24)
#define WGMMA_FP8_M64N128K32(TYPES)                                                                            \
    asm volatile(                                                                                              \
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"                                                        \
        " wgmma.mma_async.sync.aligned.m64n128k32.f32." TYPES " "                                             \
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
        "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "  \
        "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
        "%62, %63}, %64, %65, p, 1, 1;\n}\n"                                                                  \
        : ACC32(d, 0), ACC32(d, 32)                                                                            \
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
#undef ACC32
#undef ACC8

struct Stages {
    uint32_t base;
    __device__ uint32_t a(int s) const { return base + s * kStageBytes; }
    __device__ uint32_t b(int s) const { return a(s) + kABytes; }
    __device__ uint32_t full(int s) const { return base + kBarriers + 8 * s; }
    __device__ uint32_t empty(int s) const { return full(s) + 8 * kStages; }
};

// Which tile this CTA computes: consecutive CTAs walk down a group of eight
// tile rows before moving right, so the CTAs in flight share A and B slices
// in L2.
__device__ __forceinline__ void tile_of(int block, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
    constexpr int kGroup = 8;
    const int per_group = kGroup * tiles_n;
    const int group = block / per_group;
    const int first = group * kGroup;
    const int rows = min(tiles_m - first, kGroup);
    const int within = block % per_group;
    tile_m = first + within % rows;
    tile_n = within / rows;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <Fp8Format A, Fp8Format B>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_fp8_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                          float* c, int m, int n, int k, float scale, Fault fault) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (fault == Fault::hang) spin_forever();
    extern __shared__ uint8_t smem_raw[];
    const Stages st{(shared_address(smem_raw) + 1023u) & ~1023u};
    const int k_tiles = (k + kBlockK - 1) / kBlockK;
    int tile_m, tile_n;
    tile_of(blockIdx.x, (m + kBlockM - 1) / kBlockM, (n + kBlockN - 1) / kBlockN, tile_m, tile_n);
    const int m0 = tile_m * kBlockM;
    const int n0 = tile_n * kBlockN;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(st.full(s), 1);
            mbar_init(st.empty(s), 8);  // lane 0 of each consumer warp
        }
        mbar_init_fence();
    }
    __syncthreads();

    const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);  // warp-uniform
    if (warpgroup == 0) {
        setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % kStages;
                if (kt >= kStages) mbar_wait(st.empty(s), ((kt / kStages) - 1) & 1);
                mbar_expect_tx(st.full(s), kStageBytes);
                tma_load_2d(st.a(s), &a_map, st.full(s), kt * kBlockK, m0);
                tma_load_2d(st.b(s), &b_map, st.full(s), kt * kBlockK, n0);
            }
        }
    } else {
        setmaxnreg_inc<kConsumerRegs>();
        const int consumer = warpgroup - 1;
        const int warp = (threadIdx.x / 32) % 4;
        const int lane = threadIdx.x % 32;
        float acc[64];
        float slice[64];
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = slice[i] = 0.f;

        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = kt % kStages;
            mbar_wait(st.full(s), (kt / kStages) & 1);
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

        // Fragment of m64nNk32 with an f32 accumulator: thread (warp w, lane
        // l) holds rows 16w + l/4 and 16w + l/4 + 8, columns 8j + 2(l%4) +
        // {0, 1}, j = 0 ... 15.
        const int row0 = m0 + consumer * 64 + warp * 16 + lane / 4;
        const int col0 = n0 + 2 * (lane % 4);
        const bool pairs = n % 2 == 0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row0 + 8 * half;
            if (row >= m) continue;
            float* out = c + static_cast<size_t>(row) * n;
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                const int col = col0 + 8 * j;
                float first = acc[4 * j + 2 * half] * scale;
                float second = acc[4 * j + 2 * half + 1] * scale;
                if (fault == Fault::wrong_result && row == 0) {
                    first = -first - 1.f;
                    second = -second - 1.f;
                }
                if (pairs && col + 1 < n) {
                    *reinterpret_cast<float2*>(out + col) = make_float2(first, second);
                } else {
                    if (col < n) out[col] = first;
                    if (col + 1 < n) out[col + 1] = second;
                }
            }
        }
    }
#elif defined(__CUDA_ARCH__)
    __trap();  // built for a target without wgmma: never run silently
#endif
}

// ---- host side ----------------------------------------------------------------

// A row-major [rows, k] code matrix in boxes of 128 codes x 128 rows,
// 128-byte swizzle; reads outside it give zeros (0.0 in both formats).
cudaError_t make_tensor_map(CUtensorMap* map, const std::uint8_t* data, int rows, int k) {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k)};
    const cuuint32_t box[2] = {kBlockK, 128};
    return encode_tensor_map_sw128(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, data, dims, strides, box);
}

bool is_sm90(int device) {
    int major = 0, minor = 0;
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
           minor == 0;
}

template <Fp8Format A, Fp8Format B>
cudaError_t launch_formats(const std::uint8_t* a, const std::uint8_t* b, float* c, int m, int n, int k, float scale,
                           cudaStream_t stream, FaultKind fault) {
    CUtensorMap a_map, b_map;
    if (cudaError_t e = make_tensor_map(&a_map, a, m, k); e != cudaSuccess) return e;
    if (cudaError_t e = make_tensor_map(&b_map, b, n, k); e != cudaSuccess) return e;
    const auto kernel = gemm_fp8_wgmma_kernel<A, B>;
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
        e != cudaSuccess)
        return e;
    const long long tiles = static_cast<long long>((m + kBlockM - 1) / kBlockM) * ((n + kBlockN - 1) / kBlockN);
    if (tiles > 0x7FFFFFFF) return cudaErrorInvalidValue;
    kernel<<<static_cast<unsigned>(tiles), kThreads, kSharedBytes, stream>>>(a_map, b_map, c, m, n, k, scale,
                                                                            static_cast<Fault>(fault));
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gemm_fp8_wgmma(Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a,
                                  const std::uint8_t* b, float* c, int m, int n, int k, float scale,
                                  cudaStream_t stream, FaultKind fault) {
    int device = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (!is_sm90(device)) return cudaErrorNotSupported;
    // TMA needs 16-byte aligned rows: k a multiple of 16 and aligned bases.
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
    if (m < 1 || n < 1 || k < 16 || k % 16 != 0 || !aligned) return cudaErrorInvalidValue;
    const bool a_e4m3 = a_format == Fp8Format::e4m3, b_e4m3 = b_format == Fp8Format::e4m3;
    if (a_e4m3 && b_e4m3)
        return launch_formats<Fp8Format::e4m3, Fp8Format::e4m3>(a, b, c, m, n, k, scale, stream, fault);
    if (a_e4m3) return launch_formats<Fp8Format::e4m3, Fp8Format::e5m2>(a, b, c, m, n, k, scale, stream, fault);
    if (b_e4m3) return launch_formats<Fp8Format::e5m2, Fp8Format::e4m3>(a, b, c, m, n, k, scale, stream, fault);
    return launch_formats<Fp8Format::e5m2, Fp8Format::e5m2>(a, b, c, m, n, k, scale, stream, fault);
}

}  // namespace provision::kernels::detail
