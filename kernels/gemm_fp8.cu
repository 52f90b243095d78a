// C = (A B^T) * scale on the fp8 tensor cores through mma.sync
// m16n8k32 (e4m3 and e5m2 in either slot, fp32 accumulate): PTX ISA 8.4
// (CUDA 12.4), sm_89 or newer, not an arch-specific ("a") instruction, so
// one kernel proves fp8 on Ada, Hopper and both Blackwells.
//
// Block tiles of 128x128, 128-deep k-slices (one 128-byte row per tile row),
// a three-stage cp.async pipeline (96 KiB: it fits the 99 KiB of sm_86, 89
// and 120), eight warps of 64x32.  An fp8 fragment is byte for byte a TF32
// one (four consecutive bytes where TF32 has one float), so the loads and
// the swizzle are those of gemm_tf32.cu.  The tensor cores keep only about
// 13 fraction bits inside a chain of fp8 instructions (gemm_fp8_host.h):
// each k-slice's four instructions start from zero, and their sum is added
// to fp32 registers, once per 128 products.
#include <cuda_runtime.h>

#include <cstdint>

#include "fp8_dispatch.h"
#include "kernel_launchers.h"
#include "kernel_loading.h"
#include "mma_primitives.cuh"

namespace provision::kernels::detail {
namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;  // bytes = elements
constexpr int kWarpsM = 2;
constexpr int kWarpsN = 4;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = kBlockM / kWarpsM;  // 64
constexpr int kWarpN = kBlockN / kWarpsN;  // 32
constexpr int kMTiles = kWarpM / 16;       // 4
constexpr int kNTiles = kWarpN / 8;        // 4
constexpr int kStages = 3;
constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK;
constexpr int kSharedBytes = kStages * kStageBytes;  // 98304
constexpr int kChunks = kBlockK / 16;                // 16-byte chunks per tile row

// Byte offset of a tile row's 16-byte chunk: chunks XOR-ed with the row so
// ldmatrix's eight rows hit eight bank groups.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * kBlockK + ((chunk ^ (row & 7)) << 4); }

// Rows [first_row, first_row + kRows) of a [rows, k] code matrix, bytes
// [k0, k0 + 128), zero codes (0.0 in both formats) outside it.  k is a
// multiple of 16, so a chunk is wholly inside or wholly outside.
template <int kRows>
__device__ __forceinline__ void load_tile(std::uint8_t* shared, const std::uint8_t* global, int first_row, int rows,
                                          int k0, int k, int tid) {
#pragma unroll
    for (int i = 0; i < kRows * kChunks / kThreads; ++i) {
        const int index = tid + i * kThreads;
        const int row = index / kChunks;
        const int chunk = index % kChunks;
        const int global_row = first_row + row;
        const int column = k0 + chunk * 16;
        const bool valid = global_row < rows && column < k;
        const std::uint8_t* source = global + (valid ? static_cast<size_t>(global_row) * k + column : 0);
        copy_16_bytes(shared + swizzled(row, chunk), source, valid);
    }
}

// D += A * B for one 16x8x32 tile.  A: rows g, g+8 at bytes 4q.. and
// 16+4q.. (four codes per register); B: bytes 4q.. and 16+4q.. of column g.
template <Fp8Format A, Fp8Format B>
__device__ __forceinline__ void mma_16x8x32_fp8(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define PROVISION_MMA_FP8(TYPES)                                                                               \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TYPES                                               \
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                             \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
    if constexpr (A == Fp8Format::e4m3 && B == Fp8Format::e4m3) PROVISION_MMA_FP8("e4m3.e4m3");
    else if constexpr (A == Fp8Format::e4m3) PROVISION_MMA_FP8("e4m3.e5m2");
    else if constexpr (B == Fp8Format::e4m3) PROVISION_MMA_FP8("e5m2.e4m3");
    else PROVISION_MMA_FP8("e5m2.e5m2");
#undef PROVISION_MMA_FP8
#else
    __trap();  // fp8 tensor cores start with sm_89; the host never launches this
#endif
}

// Built for every target in the list; below sm_89 it traps, and the host
// never launches it there.
template <Fp8Format A, Fp8Format B>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_fp8_kernel(const std::uint8_t* a, const std::uint8_t* b, float* c, int m, int n, int k, float scale,
                    FaultKind fault) {
    if (planted(fault, FaultKind::hang)) spin_forever();
    extern __shared__ __align__(128) std::uint8_t shared[];
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int warp_m = warp / kWarpsN;
    const int warp_n = warp % kWarpsN;
    const int m0 = blockIdx.y * kBlockM;
    const int n0 = blockIdx.x * kBlockN;
    const int k_tiles = (k + kBlockK - 1) / kBlockK;

    auto load_stage = [&](int stage, int k_tile) {
        std::uint8_t* a_tile = shared + stage * kStageBytes;
        load_tile<kBlockM>(a_tile, a, m0, m, k_tile * kBlockK, k, tid);
        load_tile<kBlockN>(a_tile + kBlockM * kBlockK, b, n0, n, k_tile * kBlockK, k, tid);
    };

    float acc[kMTiles][kNTiles][4] = {};
#pragma unroll
    for (int stage = 0; stage < kStages - 1; ++stage) {
        if (stage < k_tiles) load_stage(stage, stage);
        copy_commit();
    }
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        copy_wait<kStages - 2>();  // this tile's stage has landed
        __syncthreads();           // ... for all; and the stage refilled next is no longer read
        const int next = k_tile + kStages - 1;
        if (next < k_tiles) load_stage(next % kStages, next);
        copy_commit();

        const std::uint8_t* a_tile = shared + (k_tile % kStages) * kStageBytes;
        const std::uint8_t* b_tile = a_tile + kBlockM * kBlockK;
        float slice[kMTiles][kNTiles][4] = {};  // this k-slice's sum, in the tensor cores' precision
#pragma unroll
        for (int kk = 0; kk < kBlockK / 32; ++kk) {
            std::uint32_t a_fragment[kMTiles][4];
            std::uint32_t b_fragment[kNTiles][2];
#pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt)
                ldmatrix_x4(a_fragment[mt],
                            shared_address(a_tile + swizzled(warp_m * kWarpM + mt * 16 + (lane & 15),
                                                             kk * 2 + (lane >> 4))));
#pragma unroll
            for (int pair = 0; pair < kNTiles / 2; ++pair) {
                std::uint32_t r[4];
                ldmatrix_x4(r, shared_address(b_tile + swizzled(warp_n * kWarpN + pair * 16 + (lane & 7) +
                                                                    ((lane >> 4) << 3),
                                                                kk * 2 + ((lane >> 3) & 1))));
                b_fragment[2 * pair][0] = r[0];
                b_fragment[2 * pair][1] = r[1];
                b_fragment[2 * pair + 1][0] = r[2];
                b_fragment[2 * pair + 1][1] = r[3];
            }
#pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
                for (int nt = 0; nt < kNTiles; ++nt)
                    mma_16x8x32_fp8<A, B>(slice[mt][nt], a_fragment[mt], b_fragment[nt][0], b_fragment[nt][1]);
        }
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
            for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[mt][nt][r] += slice[mt][nt][r];
    }

#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = m0 + warp_m * kWarpM + mt * 16 + (lane >> 2) + half * 8;
                const int col = n0 + warp_n * kWarpN + nt * 8 + 2 * (lane & 3);
                if (row >= m) continue;
                float first = acc[mt][nt][2 * half] * scale;
                float second = acc[mt][nt][2 * half + 1] * scale;
                if (planted(fault, FaultKind::wrong_result) && row == 0) {
                    first = -first - 1.f;
                    second = -second - 1.f;
                }
                float* out = c + static_cast<size_t>(row) * n + col;
                if (col + 1 < n && n % 2 == 0) {
                    *reinterpret_cast<float2*>(out) = make_float2(first, second);
                } else {
                    if (col < n) out[0] = first;
                    if (col + 1 < n) out[1] = second;
                }
            }
}

}  // namespace

cudaError_t launch_gemm_fp8(Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a, const std::uint8_t* b,
                            float* c, int m, int n, int k, float scale, cudaStream_t stream, FaultKind fault) {
    if (m < 1 || n < 1 || k < 16 || k % 16 != 0 || m > 65535 * kBlockM) return cudaErrorInvalidValue;
    return with_fp8_formats(a_format, b_format, [&](auto a_tag, auto b_tag) {
        const auto kernel = gemm_fp8_kernel<decltype(a_tag)::value, decltype(b_tag)::value>;
        if (cudaError_t status =
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
            status != cudaSuccess)
            return status;
        if (loading_kernels()) return load_kernel(kernel);
        const dim3 grid((n + kBlockN - 1) / kBlockN, (m + kBlockM - 1) / kBlockM);
        kernel<<<grid, kThreads, kSharedBytes, stream>>>(a, b, c, m, n, k, scale, fault);
        return cudaGetLastError();
    });
}

}  // namespace provision::kernels::detail
