// C = A B^T on Hopper's TF32 tensor cores through the warpgroup matrix
// instructions (wgmma), for sm_90a.
//
// One CTA computes a 128x256 tile of C with three warpgroups:
//   warpgroup 0   producer: one thread streams 32-deep k-slices of A
//                 (128 rows) and B (256 rows) through a ring of four
//                 shared-memory stages (TMA, 128-byte swizzle, completion on
//                 mbarriers);
//   warpgroups 1-2 consumers: 64 rows each, wgmma m64n256k8 with both
//                 operands K-major in shared memory, fp32 accumulators in
//                 registers (128 per thread).
// The tensor cores drop the low 13 mantissa bits of fp32 operands (round
// toward zero: a bias of about 7e-4 per sum that the check's bound does not
// allow), so the operands are rounded to TF32 (cvt.rna) first.  By default
// an elementwise pass writes rounded copies to scratch memory; rounding in
// shared memory instead (producer or consumer warps) costs a third of the
// speed, since it more than doubles the shared-memory traffic
// (bench/results/tf32-gemm-analysis-2026-11-23.md).
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
constexpr int kBlockN = 256;
constexpr int kBlockK = 32;  // one 128-byte swizzle row of floats
constexpr int kStages = 4;
constexpr int kThreads = 384;  // producer + two consumer warpgroups
constexpr int kConverterThreads = 96;

// One stage: the A slice then the B slice, each 1024-byte aligned as the
// 128-byte swizzle pattern (8 rows x 128 bytes) requires.
constexpr int kABytes = kBlockM * kBlockK * 4;
constexpr int kBBytes = kBlockN * kBlockK * 4;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kBarriers = kStages * kStageBytes;
constexpr int kBarrierCount = 3 * kStages;  // full[], ready[], empty[]
constexpr int kSharedBytes = kBarriers + kBarrierCount * 8 + 1024;  // + slack to align the base

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kProducerRegs = 64;
constexpr int kConsumerRegs = 216;  // 128·64 + 256·216 ≤ 64 Ki registers

#define ACC8(a, i) \
    "+f"(a[i]), "+f"(a[i + 1]), "+f"(a[i + 2]), "+f"(a[i + 3]), "+f"(a[i + 4]), "+f"(a[i + 5]), "+f"(a[i + 6]), \
        "+f"(a[i + 7])
#define ACC32(a, i) ACC8(a, i), ACC8(a, i + 8), ACC8(a, i + 16), ACC8(a, i + 24)

// D[64x256] += A[64x8] · B[8x256], both from shared memory, K-major.
__device__ __forceinline__ void wgmma_m64n256k8(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        " wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
        "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
        "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, "
        "%85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, "
        "%105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "
        "%122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1;\n"
        "}\n"
        : ACC32(d, 0), ACC32(d, 32), ACC32(d, 64), ACC32(d, 96)
        : "l"(a), "l"(b));
}

#undef ACC32
#undef ACC8

struct Stages {
    uint32_t base;
    __device__ uint32_t a(int s) const { return base + s * kStageBytes; }
    __device__ uint32_t b(int s) const { return a(s) + kABytes; }
    __device__ uint32_t full(int s) const { return base + kBarriers + 8 * s; }
    __device__ uint32_t ready(int s) const { return full(s) + 8 * kStages; }
    __device__ uint32_t empty(int s) const { return full(s) + 16 * kStages; }
};

// Rounds one landed stage to TF32 in place; the element order does not
// matter, so each of `Threads` threads takes every Threads-th 16-byte vector,
// `Batch` loads in flight at a time.
template <int Threads, int Batch>
__device__ __forceinline__ void round_stage(uint32_t stage, int thread) {
    constexpr int kVectors = kStageBytes / 16 / Threads;
    constexpr int kBatch = Batch;
    static_assert(kVectors % kBatch == 0);
#pragma unroll 1
    for (int i = 0; i < kVectors; i += kBatch) {
        uint32_t v[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const uint32_t address = stage + ((i + j) * Threads + thread) * 16;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v[j][0]), "=r"(v[j][1]), "=r"(v[j][2]), "=r"(v[j][3])
                         : "r"(address));
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const uint32_t address = stage + ((i + j) * Threads + thread) * 16;
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(to_tf32(v[j][0])),
                         "r"(to_tf32(v[j][1])), "r"(to_tf32(v[j][2])), "r"(to_tf32(v[j][3]))
                         : "memory");
        }
    }
    // The tensor cores read through the async proxy: order these stores first.
    fence_proxy_async_shared();
}

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

template <GemmRounding Round, int Batch>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tf32_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                           float* c, int m, int n, int k, Fault fault) {
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
            mbar_init(st.ready(s), kConverterThreads);
            mbar_init(st.empty(s), 8);  // lane 0 of each consumer warp
        }
        mbar_init_fence();
    }
    __syncthreads();

    const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);  // warp-uniform
    if (warpgroup == 0) {
        setmaxnreg_dec<kProducerRegs>();
        const int warp = threadIdx.x / 32;
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % kStages;
                if (kt >= kStages) mbar_wait(st.empty(s), ((kt / kStages) - 1) & 1);
                mbar_expect_tx(st.full(s), kStageBytes);
                tma_load_2d(st.a(s), &a_map, st.full(s), kt * kBlockK, m0);
                tma_load_2d(st.b(s), &b_map, st.full(s), kt * kBlockK, n0);
            }
        } else if (Round == GemmRounding::producer && warp > 0) {
            const int thread = threadIdx.x - 32;
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % kStages;
                mbar_wait(st.full(s), (kt / kStages) & 1);
                if constexpr (Round == GemmRounding::producer) round_stage<kConverterThreads, Batch>(st.a(s), thread);
                mbar_arrive(st.ready(s));
            }
        }
    } else {
        setmaxnreg_inc<kConsumerRegs>();
        const int consumer = warpgroup - 1;
        const int warp = (threadIdx.x / 32) % 4;
        const int lane = threadIdx.x % 32;
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) acc[i] = 0.f;

        // Consumer rounding: both consumers round a landed stage together
        // (256 threads), the next one while this one's products run.
        const int consumer_thread = threadIdx.x - 128;
        auto round_landed = [&](int kt) {
            const int s = kt % kStages;
            mbar_wait(st.full(s), (kt / kStages) & 1);
            if constexpr (Round == GemmRounding::consumer) round_stage<256, Batch>(st.a(s), consumer_thread);
            asm volatile("bar.sync 1, 256;" ::: "memory");
        };
        if (Round == GemmRounding::consumer) round_landed(0);

        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = kt % kStages;
            if (Round == GemmRounding::producer) mbar_wait(st.ready(s), (kt / kStages) & 1);
            if (Round == GemmRounding::none) mbar_wait(st.full(s), (kt / kStages) & 1);
            const uint64_t a_desc = smem_desc_sw128(st.a(s) + consumer * 64 * 128, 16, 1024);
            const uint64_t b_desc = smem_desc_sw128(st.b(s), 16, 1024);
            warpgroup_fence_operand(acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kBlockK / 8; ++kk) {
                // 8 columns = 32 bytes along the swizzled row.
                wgmma_m64n256k8(acc, a_desc + 2 * kk, b_desc + 2 * kk);
            }
            wgmma_commit();
            wgmma_wait<1>();  // the previous slice's products are done: its stage can be refilled
            warpgroup_fence_operand(acc);
            if (kt > 0 && lane == 0) mbar_arrive(st.empty((kt - 1) % kStages));
            if (Round == GemmRounding::consumer && kt + 1 < k_tiles) round_landed(kt + 1);
        }
        wgmma_wait<0>();
        warpgroup_fence_operand(acc);

        // Fragment of m64nNk8: thread (warp w, lane l) holds rows 16w + l/4
        // and 16w + l/4 + 8, columns 8j + 2(l%4) + {0, 1}.
        const int row0 = m0 + consumer * 64 + warp * 16 + lane / 4;
        const int col0 = n0 + 2 * (lane % 4);
        const bool pairs = n % 2 == 0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row0 + 8 * half;
            if (row >= m) continue;
            float* out = c + static_cast<size_t>(row) * n;
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                const int col = col0 + 8 * j;
                float first = acc[4 * j + 2 * half];
                const float second = acc[4 * j + 2 * half + 1];
                if (fault == Fault::wrong_result && row == 0 && col == 0) first += 64.f;
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

// A row-major [rows, k] fp32 matrix in boxes of 32 columns x box_rows rows,
// 128-byte swizzle; reads outside it give zeros.
cudaError_t make_tensor_map(CUtensorMap* map, const float* data, int rows, int k, int box_rows) {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * 4};
    const cuuint32_t box[2] = {kBlockK, static_cast<cuuint32_t>(box_rows)};
    return encode_tensor_map_sw128(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, data, dims, strides, box);
}

bool is_sm90(int device) {
    int major = 0, minor = 0;
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
           minor == 0;
}

// The rounding pass of GemmRounding::prepass: TF32 copies of an operand.
__global__ void round_to_tf32_kernel(const float4* in, float4* out, size_t count) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
        const float4 v = in[i];
        out[i] = make_float4(__uint_as_float(to_tf32(__float_as_uint(v.x))), __uint_as_float(to_tf32(__float_as_uint(v.y))),
                             __uint_as_float(to_tf32(__float_as_uint(v.z))), __uint_as_float(to_tf32(__float_as_uint(v.w))));
    }
}

// Lets the device's default memory pool keep `bytes` after they are freed:
// otherwise every synchronisation hands the scratch copies back to the
// driver and the next call pays for a fresh allocation (0.3 ms at 4096^3,
// more than the rounding pass itself).
void keep_in_pool(int device, size_t bytes) {
    cudaMemPool_t pool;
    cuuint64_t threshold = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) != cudaSuccess) {
        (void)cudaGetLastError();  // only a missed speed-up: not the launch's error
        return;
    }
    if (threshold < bytes) {
        cuuint64_t wanted = bytes;
        if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &wanted) != cudaSuccess)
            (void)cudaGetLastError();
    }
}

template <GemmRounding Round, int Batch>
cudaError_t launch(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                   FaultKind fault) {
    CUtensorMap a_map, b_map;
    if (cudaError_t e = make_tensor_map(&a_map, a, m, k, kBlockM); e != cudaSuccess) return e;
    if (cudaError_t e = make_tensor_map(&b_map, b, n, k, kBlockN); e != cudaSuccess) return e;
    const auto kernel = gemm_tf32_wgmma_kernel<Round, Batch>;
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
        e != cudaSuccess)
        return e;
    const long long tiles =
        static_cast<long long>((m + kBlockM - 1) / kBlockM) * ((n + kBlockN - 1) / kBlockN);
    if (tiles > 0x7FFFFFFF) return cudaErrorInvalidValue;
    kernel<<<static_cast<unsigned>(tiles), kThreads, kSharedBytes, stream>>>(a_map, b_map, c, m, n, k,
                                                                             static_cast<Fault>(fault));
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gemm_tf32_wgmma(const float* a, const float* b, float* c, int m, int n, int k,
                                   cudaStream_t stream, FaultKind fault, GemmRounding rounding, int batch) {
    int device = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (!is_sm90(device)) return cudaErrorNotSupported;
    // TMA needs 16-byte aligned rows: k a multiple of 4 and aligned bases.
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
    if (m < 1 || n < 1 || k < 4 || k % 4 != 0 || !aligned) return cudaErrorInvalidValue;
    switch (rounding) {
        case GemmRounding::prepass: {
            // Rounded copies in stream-ordered scratch memory, then the
            // kernel that rounds nothing; where the copies do not fit, the
            // consumers round.
            const size_t a_count = static_cast<size_t>(m) * k, b_count = static_cast<size_t>(n) * k;
            const size_t bytes = (a_count + b_count) * 4;
            keep_in_pool(device, bytes);
            void* scratch = nullptr;
            if (cudaMallocAsync(&scratch, bytes, stream) != cudaSuccess) {
                (void)cudaGetLastError();
                return launch<GemmRounding::consumer, 4>(a, b, c, m, n, k, stream, fault);
            }
            float* ra = static_cast<float*>(scratch);
            float* rb = ra + a_count;
            round_to_tf32_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(a),
                                                           reinterpret_cast<float4*>(ra), a_count / 4);
            round_to_tf32_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(b),
                                                           reinterpret_cast<float4*>(rb), b_count / 4);
            cudaError_t status = cudaGetLastError();
            if (status == cudaSuccess) status = launch<GemmRounding::none, 4>(ra, rb, c, m, n, k, stream, fault);
            const cudaError_t freed = cudaFreeAsync(scratch, stream);
            return status != cudaSuccess ? status : freed;
        }
        case GemmRounding::none: return launch<GemmRounding::none, 4>(a, b, c, m, n, k, stream, fault);
        case GemmRounding::producer:
            return batch == 8 ? launch<GemmRounding::producer, 8>(a, b, c, m, n, k, stream, fault)
                              : launch<GemmRounding::producer, 4>(a, b, c, m, n, k, stream, fault);
        case GemmRounding::consumer:
            return batch == 6 ? launch<GemmRounding::consumer, 6>(a, b, c, m, n, k, stream, fault)
                              : launch<GemmRounding::consumer, 4>(a, b, c, m, n, k, stream, fault);
    }
    return cudaErrorInvalidValue;
}

}  // namespace provision::kernels::detail
