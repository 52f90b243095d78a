// The skeleton the Hopper (sm_90a) kernels share, after FlashAttention's
// hopper/ (a tile scheduler, a main loop, an epilogue, named barriers in one
// enum): a CTA of three warpgroups, one producer that streams tiles into a
// ring of shared-memory stages through the copy engine (TMA), and two
// consumers that run the warpgroup matrix instructions (wgmma).  Each kernel
// file (gemm_fp8_wgmma.cu, gemm_tf32_wgmma.cu, attention_wgmma.cu) keeps its
// own matrix instruction and consumer loop; from here come
//   - which tile a CTA computes (gemm_tile, attention_tile),
//   - the CTA's roles and register budgets (warp_specialized),
//   - the stage ring (StageRing) and the GEMMs' stages with their producer
//     loop (GemmPipeline),
//   - the named barriers (NamedBarrier),
//   - the GEMMs' fp32 output code (store_fp32_fragment),
//   - the accumulator operand lists of the wgmma asm statements,
//   - on the host, the sm_90 test and the launch helper.
// The device code exists in the sm_90a pass alone, as in
// hopper_primitives.cuh.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "hopper_primitives.cuh"
#include "kernel_loading.h"
#include "mma_primitives.cuh"

namespace provision::kernels::detail {

constexpr int kWarpSpecializedThreads = 384;  // producer warpgroup + two consumer warpgroups
constexpr int kConsumerThreads = 256;         // both consumer warpgroups
constexpr int kConsumerWarps = 8;             // lane 0 of each frees a stage

// The named barriers (bar.sync and bar.arrive ids) of the consumer
// warpgroups, all 256 of their threads; id 0 is __syncthreads.  One list for
// every kernel, so that no two uses share an id.
enum class NamedBarrier : int {
    consumer0_turn = 1,  // attention with turn-taking: consumer 0 may issue its products
    consumer1_turn = 2,  // ... consumer 1 may
    stage_rounded = 3,   // TF32 GEMM, consumer rounding: the landed stage is rounded
};

// Operand lists of an accumulator fragment `a` in a wgmma asm statement:
// "+f" for elements i ... i + 7, i ... i + 31 and i ... i + 63.
#define PROVISION_WGMMA_ACC8(a, i)                                                                              \
    "+f"(a[i]), "+f"(a[i + 1]), "+f"(a[i + 2]), "+f"(a[i + 3]), "+f"(a[i + 4]), "+f"(a[i + 5]), "+f"(a[i + 6]), \
        "+f"(a[i + 7])
#define PROVISION_WGMMA_ACC32(a, i) \
    PROVISION_WGMMA_ACC8(a, i), PROVISION_WGMMA_ACC8(a, i + 8), PROVISION_WGMMA_ACC8(a, i + 16), PROVISION_WGMMA_ACC8(a, i + 24)
#define PROVISION_WGMMA_ACC64(a, i) PROVISION_WGMMA_ACC32(a, i), PROVISION_WGMMA_ACC32(a, i + 32)

// A ring of `Stages` shared-memory stages: load i lands in stage i % Stages;
// the consumers wait for phase parity (i / Stages) & 1 of its full barrier.
template <int Stages>
struct StageRing {
    static constexpr int kStages = Stages;
    __device__ __forceinline__ static int stage(int i) { return i % Stages; }
    __device__ __forceinline__ static int parity(int i) { return (i / Stages) & 1; }
    // The producer, before load i: whether the stage holds an earlier load
    // (i - Stages) that the consumers must free first, and the parity of
    // the stage's empty barrier that says they have.
    __device__ __forceinline__ static bool reused(int i) { return i >= Stages; }
    __device__ __forceinline__ static int freed_parity(int i) { return ((i / Stages) - 1) & 1; }
};

// The GEMMs' C = A Bᵀ tiles and their ring: each stage holds a BlockK-deep
// k-slice of A (BlockM rows) and then of B (BlockN rows), one 128-byte
// swizzle row per tile row, each slice 1024-byte aligned as the swizzle
// pattern (8 rows x 128 bytes) requires; after the stages lie the barriers:
// full[] (the slice's bytes landed), with Ready also ready[] (the stage was
// rounded in place), and empty[] (the consumers are done with it).
template <int BlockM, int BlockN, int BlockK, int ElementBytes, int Stages, bool Ready>
struct GemmPipeline {
    using Ring = StageRing<Stages>;
    static constexpr int kBlockM = BlockM;
    static constexpr int kBlockN = BlockN;
    static constexpr int kBlockK = BlockK;
    static constexpr int kABytes = BlockM * BlockK * ElementBytes;
    static constexpr int kBBytes = BlockN * BlockK * ElementBytes;
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBarriers = Stages * kStageBytes;
    static constexpr int kBarrierSets = Ready ? 3 : 2;
    static constexpr int kSharedBytes = kBarriers + kBarrierSets * Stages * 8 + 1024;  // + slack to align the base
    static_assert(BlockK * ElementBytes == 128, "one 128-byte swizzle row per tile row");

    std::uint32_t base;  // of the stages, 1024-byte aligned
    int m0, n0;          // this CTA's tile: its first row and column of C
    int k_tiles;         // k-slices

    __device__ std::uint32_t a(int s) const { return base + s * kStageBytes; }
    __device__ std::uint32_t b(int s) const { return a(s) + kABytes; }
    __device__ std::uint32_t full(int s) const { return base + kBarriers + 8 * s; }
    __device__ std::uint32_t ready(int s) const { return full(s) + 8 * Stages; }
    __device__ std::uint32_t empty(int s) const { return full(s) + 8 * Stages * (kBarrierSets - 1); }

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // This CTA's pipeline for C [m, n] = A [m, k] Bᵀ, its tile from gemm_tile.
    __device__ __forceinline__ static GemmPipeline of_cta(const void* shared, int m, int n, int k);

    // Thread 0, before the others start: a stage is full after one arrival
    // (the producer's, with the copy's bytes), ready after `ready_arrivals`,
    // empty after lane 0 of every consumer warp.
    __device__ __forceinline__ void init_barriers(int ready_arrivals = 0) const {
        for (int s = 0; s < Stages; ++s) {
            mbar_init(full(s), 1);
            if constexpr (Ready) mbar_init(ready(s), ready_arrivals);
            mbar_init(empty(s), kConsumerWarps);
        }
    }

    // One thread streams the k-slices of A (rows m0 on) and B (rows n0 on)
    // through the ring, both boxes of a stage completing on its full barrier.
    __device__ __forceinline__ void produce(const CUtensorMap* a_map, const CUtensorMap* b_map) const {
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = Ring::stage(kt);
            if (Ring::reused(kt)) mbar_wait(empty(s), Ring::freed_parity(kt));
            mbar_expect_tx(full(s), kStageBytes);
            tma_load_2d(a(s), a_map, full(s), kt * BlockK, m0);
            tma_load_2d(b(s), b_map, full(s), kt * BlockK, n0);
        }
    }
#endif
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The dynamic shared memory's start rounded up to the 1024 bytes the
// 128-byte swizzle needs (the kernels allocate 1024 bytes of slack).
__device__ __forceinline__ std::uint32_t swizzle_aligned_base(const void* shared) {
    return (shared_address(shared) + 1023u) & ~1023u;
}

// ---- which tile a CTA computes ---------------------------------------------------

struct Tile {
    int m, n;
};

// GEMM: one CTA per output tile in a 1-D grid.  Consecutive CTAs walk down a
// group of eight tile rows before moving right, so that the CTAs in flight
// share A and B slices in L2.
__device__ __forceinline__ Tile gemm_tile(int block, int tiles_m, int tiles_n) {
    constexpr int kGroup = 8;
    const int per_group = kGroup * tiles_n;
    const int group = block / per_group;
    const int first = group * kGroup;
    const int rows = min(tiles_m - first, kGroup);
    const int within = block % per_group;
    return {first + within % rows, within / rows};
}

template <int BlockM, int BlockN, int BlockK, int ElementBytes, int Stages, bool Ready>
__device__ __forceinline__ GemmPipeline<BlockM, BlockN, BlockK, ElementBytes, Stages, Ready>
GemmPipeline<BlockM, BlockN, BlockK, ElementBytes, Stages, Ready>::of_cta(const void* shared, int m, int n, int k) {
    const Tile tile = gemm_tile(blockIdx.x, (m + BlockM - 1) / BlockM, (n + BlockN - 1) / BlockN);
    return {swizzle_aligned_base(shared), tile.m * BlockM, tile.n * BlockN, (k + BlockK - 1) / BlockK};
}

// Attention: grid (query blocks, batch · heads); m is the query block, n the
// (batch, head) pair.  Causal CTAs with the most work start first.
__device__ __forceinline__ Tile attention_tile(bool causal) {
    return {causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x),
            static_cast<int>(blockIdx.y)};
}

// ---- the CTA's roles ------------------------------------------------------------

// Thread 0 sets up the barriers (init), then warpgroup 0 lowers its register
// budget and produces, warpgroups 1 and 2 raise theirs and consume
// (consume(0 or 1)).  setmaxnreg takes effect because the kernels declare
// __launch_bounds__(kWarpSpecializedThreads, 1) and each role is one branch.
template <int ProducerRegs, int ConsumerRegs, typename Init, typename Produce, typename Consume>
__device__ __forceinline__ void warp_specialized(Init&& init, Produce&& produce, Consume&& consume) {
    static_assert(128 * ProducerRegs + 256 * ConsumerRegs <= 64 * 1024, "more registers than an SM has");
    if (threadIdx.x == 0) {
        init();
        mbar_init_fence();
    }
    __syncthreads();
    const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);  // warp-uniform for ptxas
    if (warpgroup == 0) {
        setmaxnreg_dec<ProducerRegs>();
        produce();
    } else {
        setmaxnreg_inc<ConsumerRegs>();
        consume(warpgroup - 1);
    }
}

// ---- named barriers -------------------------------------------------------------

__device__ __forceinline__ void named_barrier_sync(NamedBarrier id) {
    asm volatile("bar.sync %0, %1;" ::"r"(static_cast<int>(id)), "n"(kConsumerThreads) : "memory");
}

// The same for an id known at compile time: an immediate operand.
template <NamedBarrier Id>
__device__ __forceinline__ void named_barrier_sync() {
    asm volatile("bar.sync %0, %1;" ::"n"(static_cast<int>(Id)), "n"(kConsumerThreads) : "memory");
}

__device__ __forceinline__ void named_barrier_arrive(NamedBarrier id) {
    asm volatile("bar.arrive %0, %1;" ::"r"(static_cast<int>(id)), "n"(kConsumerThreads) : "memory");
}

// The barrier on which consumer 0 or 1 waits for its turn.
__device__ __forceinline__ NamedBarrier consumer_turn(int consumer) {
    return static_cast<NamedBarrier>(static_cast<int>(NamedBarrier::consumer0_turn) + consumer);
}

// ---- fp32 output ----------------------------------------------------------------

// Stores one consumer's fp32 accumulators of wgmma m64nN (Count = N / 2 per
// thread) into row-major C [m, n], the consumer's first row at `row_base`,
// its first column at n0.  The fragment gives thread (warp w, lane l) rows
// 16w + l/4 and 16w + l/4 + 8, columns 8j + 2(l%4) + {0, 1}.
// finish(row, col, first, second) may change a pair before it is stored
// (scale, planted fault).  Pairs go out as one 8-byte store where n is even;
// nothing lands outside C.
template <int Count, typename Finish>
__device__ __forceinline__ void store_fp32_fragment(const float (&acc)[Count], float* c, int m, int n, int row_base,
                                                    int n0, Finish&& finish) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int row0 = row_base + warp * 16 + lane / 4;
    const int col0 = n0 + 2 * (lane % 4);
    const bool pairs = n % 2 == 0;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row = row0 + 8 * half;
        if (row >= m) continue;
        float* out = c + static_cast<std::size_t>(row) * n;
#pragma unroll
        for (int j = 0; j < Count / 4; ++j) {
            const int col = col0 + 8 * j;
            float first = acc[4 * j + 2 * half];
            float second = acc[4 * j + 2 * half + 1];
            finish(row, col, first, second);
            if (pairs && col + 1 < n) {
                *reinterpret_cast<float2*>(out + col) = make_float2(first, second);
            } else {
                if (col < n) out[col] = first;
                if (col + 1 < n) out[col + 1] = second;
            }
        }
    }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// ---- host side ------------------------------------------------------------------

// Whether `device` is an sm_90 GPU, the only kind the sm_90a code runs on; a
// failed query counts as no.
inline bool is_sm90(int device) {
    int major = 0, minor = 0;
    return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
           minor == 0;
}

// The current device, or cudaErrorNotSupported where it is not sm_90.
inline cudaError_t current_sm90_device(int& device) {
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    return is_sm90(device) ? cudaSuccess : cudaErrorNotSupported;
}

// One CTA per BlockM x BlockN tile of an m x n output, in a 1-D grid
// (gemm_tile orders them); cudaErrorInvalidValue past 2^31 - 1 tiles.
inline cudaError_t gemm_grid(int m, int n, int block_m, int block_n, dim3& grid) {
    const long long tiles = static_cast<long long>((m + block_m - 1) / block_m) * ((n + block_n - 1) / block_n);
    if (tiles > 0x7FFFFFFF) return cudaErrorInvalidValue;
    grid = dim3(static_cast<unsigned>(tiles));
    return cudaSuccess;
}

// Launches a warp-specialised kernel (kWarpSpecializedThreads threads) with
// `shared_bytes` of dynamic shared memory, its limit raised to that first.
template <typename... Params, typename... Args>
cudaError_t launch_warp_specialized(void (*kernel)(Params...), dim3 grid, int shared_bytes, cudaStream_t stream,
                                    Args&&... args) {
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
        e != cudaSuccess)
        return e;
    if (loading_kernels()) return load_kernel(kernel);
    kernel<<<grid, kWarpSpecializedThreads, shared_bytes, stream>>>(std::forward<Args>(args)...);
    return cudaGetLastError();
}

}  // namespace provision::kernels::detail
