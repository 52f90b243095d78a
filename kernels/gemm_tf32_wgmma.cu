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
// The CTA, the ring, the producer and the output code are the skeleton's
// (hopper_skeleton.cuh), shared with gemm_fp8_wgmma.cu.
//
// The device code exists only in the sm_90a pass; every other target gets a
// kernel that traps, and the launcher refuses devices that are not sm_90.
#include <cuda.h>  // CUtensorMap and its enums
#include <cuda_runtime.h>

#include <cstdint>

#include "hopper_skeleton.cuh"
#include "kernel_launchers.h"
#include "tensor_map.h"

namespace provision::kernels::detail {
namespace {

// 32-deep k-slices: 32 floats, one swizzle row; four stages with a ready
// barrier each for the rounding producer warps.
using Pipeline = GemmPipeline<128, 256, 32, 4, 4, true>;
constexpr int kBlockK = Pipeline::kBlockK;
constexpr int kConverterThreads = 96;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kProducerRegs = 64;
constexpr int kConsumerRegs = 216;

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
        : PROVISION_WGMMA_ACC64(d, 0), PROVISION_WGMMA_ACC64(d, 64)
        : "l"(a), "l"(b));
}

// Rounds one landed stage to TF32 in place; the element order does not
// matter, so each of `Threads` threads takes every Threads-th 16-byte vector,
// `Batch` loads in flight at a time.
template <int Threads, int Batch>
__device__ __forceinline__ void round_stage(uint32_t stage, int thread) {
    constexpr int kVectors = Pipeline::kStageBytes / 16 / Threads;
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

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <GemmRounding Round, int Batch>
__global__ void __launch_bounds__(kWarpSpecializedThreads, 1)
    gemm_tf32_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                           float* c, int m, int n, int k, FaultKind fault) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Ring = Pipeline::Ring;
    if (planted(fault, FaultKind::hang)) spin_forever();
    extern __shared__ uint8_t smem_raw[];
    const Pipeline st = Pipeline::of_cta(smem_raw, m, n, k);

    warp_specialized<kProducerRegs, kConsumerRegs>(
        [&] { st.init_barriers(kConverterThreads); },
        [&] {
            const int warp = threadIdx.x / 32;
            if (threadIdx.x == 0) {
                st.produce(&a_map, &b_map);
            } else if (Round == GemmRounding::producer && warp > 0) {
                const int thread = threadIdx.x - 32;
                for (int kt = 0; kt < st.k_tiles; ++kt) {
                    const int s = Ring::stage(kt);
                    mbar_wait(st.full(s), Ring::parity(kt));
                    if constexpr (Round == GemmRounding::producer)
                        round_stage<kConverterThreads, Batch>(st.a(s), thread);
                    mbar_arrive(st.ready(s));
                }
            }
        },
        [&](int consumer) {
            const int lane = threadIdx.x % 32;
            float acc[128];
#pragma unroll
            for (int i = 0; i < 128; ++i) acc[i] = 0.f;

            // Consumer rounding: both consumers round a landed stage together
            // (256 threads), the next one while this one's products run.
            const int consumer_thread = threadIdx.x - 128;
            auto round_landed = [&](int kt) {
                const int s = Ring::stage(kt);
                mbar_wait(st.full(s), Ring::parity(kt));
                if constexpr (Round == GemmRounding::consumer)
                    round_stage<kConsumerThreads, Batch>(st.a(s), consumer_thread);
                named_barrier_sync<NamedBarrier::stage_rounded>();
            };
            if (Round == GemmRounding::consumer) round_landed(0);

            for (int kt = 0; kt < st.k_tiles; ++kt) {
                const int s = Ring::stage(kt);
                if (Round == GemmRounding::producer) mbar_wait(st.ready(s), Ring::parity(kt));
                if (Round == GemmRounding::none) mbar_wait(st.full(s), Ring::parity(kt));
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
                if (kt > 0 && lane == 0) mbar_arrive(st.empty(Ring::stage(kt - 1)));
                if (Round == GemmRounding::consumer && kt + 1 < st.k_tiles) round_landed(kt + 1);
            }
            wgmma_wait<0>();
            warpgroup_fence_operand(acc);

            store_fp32_fragment(acc, c, m, n, st.m0 + consumer * 64, st.n0, [&](int row, int col, float& first, float&) {
                if (planted(fault, FaultKind::wrong_result) && row == 0 && col == 0) first += 64.f;
            });
        });
#elif defined(__CUDA_ARCH__)
    __trap();  // built for a target without wgmma: never run silently
#endif
}

// ---- host side ----------------------------------------------------------------

// A row-major [rows, k] fp32 matrix in boxes of 32 columns x box_rows rows,
// 128-byte swizzle; reads outside it give zeros.
cudaError_t make_tensor_map(CUtensorMap* map, const float* data, int rows, int k, int box_rows) {
    return encode_matrix_sw128(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, data, rows, k, kBlockK, box_rows);
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
    if (cudaError_t e = make_tensor_map(&a_map, a, m, k, Pipeline::kBlockM); e != cudaSuccess) return e;
    if (cudaError_t e = make_tensor_map(&b_map, b, n, k, Pipeline::kBlockN); e != cudaSuccess) return e;
    dim3 grid;
    if (cudaError_t e = gemm_grid(m, n, Pipeline::kBlockM, Pipeline::kBlockN, grid); e != cudaSuccess) return e;
    return launch_warp_specialized(gemm_tf32_wgmma_kernel<Round, Batch>, grid, Pipeline::kSharedBytes, stream, a_map,
                                   b_map, c, m, n, k, fault);
}

}  // namespace

cudaError_t launch_gemm_tf32_wgmma(const float* a, const float* b, float* c, int m, int n, int k,
                                   cudaStream_t stream, FaultKind fault, GemmRounding rounding, int batch) {
    int device = 0;
    if (cudaError_t e = current_sm90_device(device); e != cudaSuccess) return e;
    // TMA needs 16-byte aligned rows: k a multiple of 4 and aligned bases.
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
    if (m < 1 || n < 1 || k < 4 || k % 4 != 0 || !aligned) return cudaErrorInvalidValue;
    if (rounding == GemmRounding::automatic) {
        constexpr double kPrepassFrom = 2048.0 * 2048.0 * 2048.0;  // equal there on an H100: 0.079 and 0.081 ms
        rounding = static_cast<double>(m) * n * k >= kPrepassFrom ? GemmRounding::prepass : GemmRounding::consumer;
    }
    switch (rounding) {
        case GemmRounding::prepass: {
            // Rounded copies in stream-ordered scratch memory, then the
            // kernel that rounds nothing; where the copies do not fit, the
            // consumers round.
            const size_t a_count = static_cast<size_t>(m) * k, b_count = static_cast<size_t>(n) * k;
            const size_t bytes = (a_count + b_count) * 4;
            if (loading_kernels()) {  // kernel_loading.h: nothing allocated, nothing launched
                if (const cudaError_t e = load_kernel(round_to_tf32_kernel); e != cudaSuccess) return e;
                return launch<GemmRounding::none, 4>(a, b, c, m, n, k, stream, fault);
            }
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
        case GemmRounding::automatic:  // decided above
            return batch == 6 ? launch<GemmRounding::consumer, 6>(a, b, c, m, n, k, stream, fault)
                              : launch<GemmRounding::consumer, 4>(a, b, c, m, n, k, stream, fault);
    }
    return cudaErrorInvalidValue;
}

}  // namespace provision::kernels::detail
