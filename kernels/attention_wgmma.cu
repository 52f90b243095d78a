// Fused bf16 attention forward (online softmax) for Hopper, through the
// warpgroup matrix instructions (wgmma) and the tensor memory accelerator.
//
// One CTA computes 128 query rows of one (batch, head) with three warpgroups:
//   warpgroup 0   producer: one thread streams Q once, then K and V tiles of
//                 128 rows through a ring of shared-memory stages (TMA,
//                 128-byte swizzle, completion on mbarriers);
//   warpgroups 1-2 consumers: 64 query rows each.  S = Q·Kᵀ reads both
//                 operands from shared memory; O += P·V takes P from
//                 registers (the S accumulators rounded to bf16) and V
//                 from shared memory as an MN-major operand.
// Softmax of block j+1 runs while P·V of block j is still on the tensor
// cores.  Optionally (Pingpong) the two consumers take turns on the tensor
// cores through named barriers, so one warpgroup's exponentials overlap the
// other's products.  The CTA, the ring and the named barriers are the
// skeleton's (hopper_skeleton.cuh), shared with the wgmma GEMMs.
//
// The device code exists only in the sm_90a pass; every other target gets
// a kernel that traps, and the launcher refuses devices that are not sm_90.
#include <cuda.h>  // CUtensorMap and its enums
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "hopper_skeleton.cuh"
#include "kernel_launchers.h"
#include "tensor_map.h"

namespace provision::kernels::detail {
namespace {

constexpr int kBlockM = 128;        // query rows per CTA (two consumers of 64)
constexpr int kBlockN = 128;        // key/value rows per stage
constexpr int kSlabCols = 64;       // one 128-byte swizzle row holds 64 bf16
constexpr int kSlabBytes = 128 * 128;  // 128 rows × 128 bytes

// Shared-memory map; every tile starts on a 1024-byte boundary, which the
// 128-byte swizzle pattern (8 rows × 128 bytes) requires.
template <int HeadDim, int Stages>
struct SharedLayout {
    static constexpr int kSlabs = HeadDim / kSlabCols;
    static constexpr int kTileBytes = kSlabs * kSlabBytes;  // 128 rows × HeadDim
    static constexpr int kQ = 0;
    static constexpr int kK = kQ + kTileBytes;
    static constexpr int kV = kK + Stages * kTileBytes;
    static constexpr int kBarriers = kV + Stages * kTileBytes;
    static constexpr int kBarrierCount = 1 + 3 * Stages;  // q_full, k_full[], v_full[], empty[]
    static constexpr int kBytes = kBarriers + kBarrierCount * 8;
    static constexpr int kAlloc = kBytes + 1024;  // slack to align the base
};

struct KernelArgs {
    __nv_bfloat16* o;
    int seq_len;
    float scale_log2;  // softmax scale × log2(e): exponentials are exp2
    float out_sign;    // −1 flips the output (test-only fault)
    bool causal;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;

// ---- the two matrix products --------------------------------------------------

// D[64×128] (+)= A[64×16] · B[16×128], both from shared memory, K-major.
__device__ __forceinline__ void wgmma_qk(float (&d)[64], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "
        "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "
        "%55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : PROVISION_WGMMA_ACC64(d, 0)
        : "l"(a), "l"(b), "r"(accumulate));
}

// D[64×HeadDim] += A[64×16] (registers) · B[16×HeadDim] (shared, MN-major).
__device__ __forceinline__ void wgmma_pv(float (&d)[64], const uint32_t* a, uint64_t b) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "
        "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "
        "%55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : PROVISION_WGMMA_ACC64(d, 0)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

__device__ __forceinline__ void wgmma_pv(float (&d)[32], const uint32_t* a, uint64_t b) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %37, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : PROVISION_WGMMA_ACC32(d, 0)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// ---- small helpers ------------------------------------------------------------

__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
}

// Per-thread view of one consumer's 64 rows: the accumulator fragment of
// m64nNk16 gives thread (warp w, lane l) rows 16w + l/4 and 16w + l/4 + 8,
// columns 8j + 2(l%4) + {0,1}; s[4j], s[4j+1] are the first row, s[4j+2],
// s[4j+3] the second.
struct RowState {
    float max0, max1;  // running maxima of the raw scores
    float sum0, sum1;  // this thread's share of the running denominators
};

// Masks block n0 where needed, then turns the scores into exponentials in
// place and returns the factors that rescale the previous output rows.
__device__ __forceinline__ void softmax_block(float (&s)[64], RowState& st, float& alpha0,
                                              float& alpha1, bool mask, int n0, int row0,
                                              int col, const KernelArgs& args) {
    constexpr float kNegInf = -INFINITY;
    if (mask) {
        const int row1 = row0 + 8;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int kv = n0 + 8 * j + col + e;
                const bool outside = kv >= args.seq_len;
                if (outside || (args.causal && kv > row0)) s[4 * j + e] = kNegInf;
                if (outside || (args.causal && kv > row1)) s[4 * j + 2 + e] = kNegInf;
            }
        }
    }
    float m0 = st.max0, m1 = st.max1;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        m0 = fmaxf(m0, fmaxf(s[4 * j], s[4 * j + 1]));
        m1 = fmaxf(m1, fmaxf(s[4 * j + 2], s[4 * j + 3]));
    }
    m0 = quad_max(m0);
    m1 = quad_max(m1);
    // A row with nothing unmasked yet keeps a finite base so exp2 gives 0, not NaN.
    const float base0 = m0 == kNegInf ? 0.f : m0 * args.scale_log2;
    const float base1 = m1 == kNegInf ? 0.f : m1 * args.scale_log2;
    alpha0 = exp2_approx(st.max0 * args.scale_log2 - base0);
    alpha1 = exp2_approx(st.max1 * args.scale_log2 - base1);
    st.max0 = m0;
    st.max1 = m1;
    float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        s[4 * j] = exp2_approx(fmaf(s[4 * j], args.scale_log2, -base0));
        s[4 * j + 1] = exp2_approx(fmaf(s[4 * j + 1], args.scale_log2, -base0));
        s[4 * j + 2] = exp2_approx(fmaf(s[4 * j + 2], args.scale_log2, -base1));
        s[4 * j + 3] = exp2_approx(fmaf(s[4 * j + 3], args.scale_log2, -base1));
        sum0 += s[4 * j] + s[4 * j + 1];
        sum1 += s[4 * j + 2] + s[4 * j + 3];
    }
    st.sum0 = st.sum0 * alpha0 + sum0;
    st.sum1 = st.sum1 * alpha1 + sum1;
}

template <int N>
__device__ __forceinline__ void rescale(float (&o)[N], float alpha0, float alpha1) {
#pragma unroll
    for (int j = 0; j < N / 4; ++j) {
        o[4 * j] *= alpha0;
        o[4 * j + 1] *= alpha0;
        o[4 * j + 2] *= alpha1;
        o[4 * j + 3] *= alpha1;
    }
}

// The S accumulator fragment for columns 16k..16k+15 is, pair by pair, the
// A-operand fragment of the next product: P needs no shuffles.
__device__ __forceinline__ void to_operand(const float (&s)[64], uint32_t (&p)[32]) {
#pragma unroll
    for (int i = 0; i < 32; ++i) p[i] = pack_bf16(s[2 * i], s[2 * i + 1]);
}


// Shared-memory addresses of one CTA's tiles and barriers.
template <int HeadDim, int Stages>
struct SharedTiles {
    using Layout = SharedLayout<HeadDim, Stages>;
    uint32_t base;
    __device__ uint32_t q() const { return base + Layout::kQ; }
    __device__ uint32_t k(int stage) const { return base + Layout::kK + stage * Layout::kTileBytes; }
    __device__ uint32_t v(int stage) const { return base + Layout::kV + stage * Layout::kTileBytes; }
    __device__ uint32_t q_full() const { return base + Layout::kBarriers; }
    __device__ uint32_t k_full(int stage) const { return q_full() + 8u * (1 + stage); }
    __device__ uint32_t v_full(int stage) const { return q_full() + 8u * (1 + Stages + stage); }
    __device__ uint32_t empty(int stage) const { return q_full() + 8u * (1 + 2 * Stages + stage); }
};

// One thread streams Q, then K_j and V_j for every block into the ring.
template <int HeadDim, int Stages>
__device__ __forceinline__ void produce(const SharedTiles<HeadDim, Stages>& t, const CUtensorMap* q_map,
                                        const CUtensorMap* k_map, const CUtensorMap* v_map, int m_block,
                                        int head, int n_blocks) {
    using Layout = SharedLayout<HeadDim, Stages>;
    using Ring = StageRing<Stages>;
    constexpr uint32_t kTileBytes = Layout::kTileBytes;
    mbar_expect_tx(t.q_full(), kTileBytes);
    for (int c = 0; c < Layout::kSlabs; ++c)
        tma_load_3d(t.q() + c * kSlabBytes, q_map, t.q_full(), c * kSlabCols, m_block * kBlockM, head);
    for (int j = 0; j < n_blocks; ++j) {
        const int s = Ring::stage(j);
        if (Ring::reused(j)) mbar_wait(t.empty(s), Ring::freed_parity(j));
        mbar_expect_tx(t.k_full(s), kTileBytes);
        for (int c = 0; c < Layout::kSlabs; ++c)
            tma_load_3d(t.k(s) + c * kSlabBytes, k_map, t.k_full(s), c * kSlabCols, j * kBlockN, head);
        mbar_expect_tx(t.v_full(s), kTileBytes);
        for (int c = 0; c < Layout::kSlabs; ++c)
            tma_load_3d(t.v(s) + c * kSlabBytes, v_map, t.v_full(s), c * kSlabCols, j * kBlockN, head);
    }
}

// One consumer warpgroup: 64 query rows against every key/value block.
template <int HeadDim, int Stages, bool Pingpong>
__device__ __forceinline__ void consume(const SharedTiles<HeadDim, Stages>& t, const KernelArgs& args,
                                        int consumer, int m_block, int head, int n_blocks) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int row0 = m_block * kBlockM + consumer * 64 + warp * 16 + lane / 4;
    const int col = 2 * (lane % 4);
    using Ring = StageRing<Stages>;
    const NamedBarrier my_turn = consumer_turn(consumer);
    const NamedBarrier other_turn = consumer_turn(1 - consumer);

    // This consumer's 64 Q rows start 64·128 bytes into each slab.
    const uint64_t q_desc = smem_desc_sw128(t.q() + consumer * 64 * 128, 16, 1024);

    float o[HeadDim / 2];
    float s[64];
    uint32_t p[32];
#pragma unroll
    for (int i = 0; i < HeadDim / 2; ++i) o[i] = 0.f;
    RowState st{-INFINITY, -INFINITY, 0.f, 0.f};

    auto issue_qk = [&](int stage) {
        const uint64_t k_desc = smem_desc_sw128(t.k(stage), 16, 1024);
#pragma unroll
        for (int kk = 0; kk < HeadDim / 16; ++kk) {
            // 16 columns = 32 bytes along the swizzled row; a new slab every 4 steps.
            const uint32_t step = ((kk / 4) * kSlabBytes + (kk % 4) * 32) >> 4;
            wgmma_qk(s, q_desc + step, k_desc + step, kk > 0);
        }
    };
    auto issue_pv = [&](int stage) {
        const uint64_t v_desc = smem_desc_sw128(t.v(stage), kSlabBytes, 1024);
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk)
            wgmma_pv(o, &p[4 * kk], v_desc + ((kk * 16 * 128) >> 4));  // 16 rows of 128 bytes
    };
    auto needs_mask = [&](int j) {
        return (args.causal && j == m_block) || (j + 1) * kBlockN > args.seq_len;
    };

    // Phase 0: S_0 = Q·K_0ᵀ.  Consumer 0 takes the tensor cores first.
    if (Pingpong && consumer == 1) named_barrier_arrive(other_turn);
    mbar_wait(t.q_full(), 0);
    mbar_wait(t.k_full(0), 0);
    if (Pingpong) named_barrier_sync(my_turn);
    warpgroup_fence_operand(s);
    wgmma_fence();
    issue_qk(0);
    wgmma_commit();
    if (Pingpong) named_barrier_arrive(other_turn);
    wgmma_wait<0>();
    warpgroup_fence_operand(s);
    {
        float alpha0, alpha1;
        softmax_block(s, st, alpha0, alpha1, needs_mask(0), 0, row0, col, args);
        to_operand(s, p);
    }

    // Phase j+1: S_{j+1} = Q·K_{j+1}ᵀ and O += P_j·V_j; the softmax of
    // S_{j+1} runs while P_j·V_j is still on the tensor cores.
    for (int j = 0; j + 1 < n_blocks; ++j) {
        const int stage = Ring::stage(j);
        const int next = Ring::stage(j + 1);
        mbar_wait(t.v_full(stage), Ring::parity(j));
        mbar_wait(t.k_full(next), Ring::parity(j + 1));
        if (Pingpong) named_barrier_sync(my_turn);
        warpgroup_fence_operand(o);
        warpgroup_fence_operand(s);
        warpgroup_fence_operand(p);
        wgmma_fence();
        issue_qk(next);
        wgmma_commit();
        issue_pv(stage);
        wgmma_commit();
        if (Pingpong) named_barrier_arrive(other_turn);
        wgmma_wait<1>();
        warpgroup_fence_operand(s);
        float alpha0, alpha1;
        softmax_block(s, st, alpha0, alpha1, needs_mask(j + 1), (j + 1) * kBlockN, row0, col, args);
        wgmma_wait<0>();
        warpgroup_fence_operand(o);
        warpgroup_fence_operand(p);
        if (lane == 0) mbar_arrive(t.empty(stage));
        rescale(o, alpha0, alpha1);
        to_operand(s, p);
    }

    // Last phase: O += P·V of the last block.
    {
        const int j = n_blocks - 1;
        const int stage = Ring::stage(j);
        mbar_wait(t.v_full(stage), Ring::parity(j));
        if (Pingpong) named_barrier_sync(my_turn);
        warpgroup_fence_operand(o);
        warpgroup_fence_operand(p);
        wgmma_fence();
        issue_pv(stage);
        wgmma_commit();
        wgmma_wait<0>();
        warpgroup_fence_operand(o);
        // Consumer 1 finishes last: its turn-passing arrive would have no partner.
        if (Pingpong && consumer == 0) named_barrier_arrive(other_turn);
    }

    // Epilogue: normalise and store the rows inside the sequence.
    const float inv0 = args.out_sign / quad_sum(st.sum0);
    const float inv1 = args.out_sign / quad_sum(st.sum1);
    __nv_bfloat16* out = args.o + static_cast<size_t>(head) * args.seq_len * HeadDim;
    if (row0 < args.seq_len) {
        __nv_bfloat16* r = out + static_cast<size_t>(row0) * HeadDim + col;
#pragma unroll
        for (int j = 0; j < HeadDim / 8; ++j)
            *reinterpret_cast<__nv_bfloat162*>(r + 8 * j) =
                __floats2bfloat162_rn(o[4 * j] * inv0, o[4 * j + 1] * inv0);
    }
    if (row0 + 8 < args.seq_len) {
        __nv_bfloat16* r = out + static_cast<size_t>(row0 + 8) * HeadDim + col;
#pragma unroll
        for (int j = 0; j < HeadDim / 8; ++j)
            *reinterpret_cast<__nv_bfloat162*>(r + 8 * j) =
                __floats2bfloat162_rn(o[4 * j + 2] * inv1, o[4 * j + 3] * inv1);
    }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <int HeadDim, int Stages, bool Pingpong>
__global__ void __launch_bounds__(kWarpSpecializedThreads, 1)
    attention_wgmma_kernel(const __grid_constant__ CUtensorMap q_map,
                           const __grid_constant__ CUtensorMap k_map,
                           const __grid_constant__ CUtensorMap v_map, const KernelArgs args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    const SharedTiles<HeadDim, Stages> tiles{swizzle_aligned_base(smem_raw)};
    const Tile tile = attention_tile(args.causal);
    const int m_block = tile.m;
    const int head = tile.n;
    const int n_total = (args.seq_len + kBlockN - 1) / kBlockN;
    const int n_blocks = args.causal ? min(n_total, m_block + 1) : n_total;  // kBlockM == kBlockN

    warp_specialized<kProducerRegs, kConsumerRegs>(
        [&] {
            mbar_init(tiles.q_full(), 1);
            for (int s = 0; s < Stages; ++s) {
                mbar_init(tiles.k_full(s), 1);
                mbar_init(tiles.v_full(s), 1);
                mbar_init(tiles.empty(s), kConsumerWarps);  // lane 0 of each consumer warp
            }
        },
        [&] {
            if (threadIdx.x == 0) produce(tiles, &q_map, &k_map, &v_map, m_block, head, n_blocks);
        },
        [&](int consumer) { consume<HeadDim, Stages, Pingpong>(tiles, args, consumer, m_block, head, n_blocks); });
#elif defined(__CUDA_ARCH__)
    __trap();  // built for a target without wgmma: never run silently
#endif
}

// ---- host side ----------------------------------------------------------------

// [batch·heads, seq_len, head_dim] seen as a 3-D tensor, boxes of 64
// columns × 128 rows of one head, 128-byte swizzle; rows past seq_len read
// as zeros.
cudaError_t make_tensor_map(CUtensorMap* map, const void* data, const AttentionProblem& p) {
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(p.head_dim), static_cast<cuuint64_t>(p.seq_len),
                                static_cast<cuuint64_t>(p.batch) * p.heads};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(p.head_dim) * 2,
                                   static_cast<cuuint64_t>(p.seq_len) * p.head_dim * 2};
    const cuuint32_t box[3] = {kSlabCols, kBlockN, 1};
    return encode_tensor_map_sw128(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, data, dims, strides, box);
}

template <int HeadDim, int Stages, bool Pingpong>
cudaError_t launch_variant(const void* q, const void* k, const void* v, void* o, const AttentionProblem& p,
                           cudaStream_t stream, FaultKind fault) {
    CUtensorMap q_map, k_map, v_map;
    for (auto [map, data] : {std::pair{&q_map, q}, std::pair{&k_map, k}, std::pair{&v_map, v}})
        if (const cudaError_t e = make_tensor_map(map, data, p); e != cudaSuccess) return e;
    const KernelArgs args{static_cast<__nv_bfloat16*>(o), p.seq_len, p.scale * 1.4426950408889634f,
                          planted(fault, FaultKind::wrong_result) ? -1.f : 1.f, p.causal};
    const dim3 grid((p.seq_len + kBlockM - 1) / kBlockM, p.batch * p.heads);
    return launch_warp_specialized(attention_wgmma_kernel<HeadDim, Stages, Pingpong>, grid,
                                   SharedLayout<HeadDim, Stages>::kAlloc, stream, q_map, k_map, v_map, args);
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

cudaError_t launch_attention_bf16_wgmma(const void* q, const void* k, const void* v, void* o,
                                        const AttentionProblem& problem, cudaStream_t stream, FaultKind fault,
                                        AttentionTurns turns) {
    int device = 0;
    if (const cudaError_t e = current_sm90_device(device); e != cudaSuccess) return e;
    const AttentionProblem& p = problem;
    const bool shape_ok = p.batch >= 1 && p.heads >= 1 && p.seq_len >= 1 &&
                          static_cast<long long>(p.batch) * p.heads <= 65535 &&
                          (p.head_dim == 64 || p.head_dim == 128) && std::isfinite(p.scale) &&
                          p.scale > 0.f;
    if (!shape_ok || !aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(o))
        return cudaErrorInvalidValue;
    // The kernel has no hang switch of its own: a kernel that never returns
    // runs ahead of it on the stream.
    if constexpr (kFaultInjection)
        if (fault == FaultKind::hang)
            if (const cudaError_t e = launch_spin_forever(stream); e != cudaSuccess) return e;
    // Chosen from timings on an H100 (docs/KERNELS.md, the wgmma attention):
    // three stages keep the copy engine a block ahead at head_dim 128 (224
    // KiB of shared memory), four at 64.  Turn-taking between the consumers
    // pays off on long key loops and causal masks, and costs on short ones.
    const bool pingpong = turns == AttentionTurns::automatic ? p.causal || p.seq_len >= 8192
                                                             : turns == AttentionTurns::pingpong;
    if (p.head_dim == 128)
        return pingpong ? launch_variant<128, 3, true>(q, k, v, o, p, stream, fault)
                        : launch_variant<128, 3, false>(q, k, v, o, p, stream, fault);
    return pingpong ? launch_variant<64, 4, true>(q, k, v, o, p, stream, fault)
                    : launch_variant<64, 4, false>(q, k, v, o, p, stream, fault);
}

}  // namespace provision::kernels::detail
