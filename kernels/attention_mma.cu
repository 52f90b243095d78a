// Fused attention forward on the tensor cores through mma.sync, in the
// manner of FlashAttention-2: each warp owns 16 query rows whose Q fragments
// stay in registers; the block streams key/value tiles through shared memory
// (cp.async, overlapped with the math), keeps the running row maximum and
// sum (online softmax) and the output accumulator in registers, and writes
// only the normalised output.  fp16 runs on sm_75 and newer, bf16 on sm_80
// and newer.
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "kernel_launchers.h"
#include "kernel_loading.h"
#include "mma_primitives.cuh"

namespace provision::kernels::detail {
namespace {

template <typename T>
struct AttentionParams {
    const T* q;
    const T* k;
    const T* v;
    T* o;
    int seq_len;
    float scale_log2;  // softmax scale times log2(e): the kernel works in powers of two
    FaultKind fault;
};

// One tile shape.  Shared memory holds one Q tile and kStages K and V tiles:
// with two stages the next tile's copies start a whole iteration early.
template <int kHeadDim_, int kWarps_, int kBlockN_, int kStages_>
struct AttentionTiles {
    static constexpr int kHeadDim = kHeadDim_;
    static constexpr int kWarps = kWarps_;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kBlockM = 16 * kWarps;  // query rows per block
    static constexpr int kBlockN = kBlockN_;     // key rows per tile
    static constexpr int kStages = kStages_;
    static constexpr int kSharedBytes = (kBlockM + 2 * kStages * kBlockN) * kHeadDim * 2;
};

// Element offset of 16-byte chunk `chunk` of row `row` in a shared tile.  The
// chunk index is XOR-ed with the row, so the eight rows that one ldmatrix
// phase reads at the same logical chunk sit in eight different bank groups.
template <int kHeadDim>
__device__ __forceinline__ int swizzled(int row, int chunk) {
    return row * kHeadDim + ((chunk ^ (row & 7)) << 3);
}

// Copies rows [first_row, first_row + kRows) of a [seq_len, kHeadDim] matrix
// into a swizzled shared tile; rows past seq_len are zero-filled.
template <int kRows, int kHeadDim, int kThreads, typename T>
__device__ __forceinline__ void load_tile(T* shared, const T* global, int first_row, int seq_len, int tid) {
    constexpr int kChunks = kHeadDim / 8;
#pragma unroll
    for (int i = 0; i < (kRows * kChunks + kThreads - 1) / kThreads; ++i) {
        const int index = tid + i * kThreads;
        if (kRows * kChunks % kThreads != 0 && index >= kRows * kChunks) break;
        const int row = index / kChunks;
        const int chunk = index % kChunks;
        const int global_row = first_row + row;
        const bool valid = global_row < seq_len;
        const T* source = global + static_cast<size_t>(valid ? global_row : 0) * kHeadDim + chunk * 8;
        copy_16_bytes(shared + swizzled<kHeadDim>(row, chunk), source, valid);
    }
}

template <typename T, typename Tiles, bool kCausal>
__device__ __forceinline__ void attention_body(const AttentionParams<T>& p) {
    constexpr int D = Tiles::kHeadDim;
    constexpr int BM = Tiles::kBlockM;
    constexpr int BN = Tiles::kBlockN;
    constexpr int kThreads = Tiles::kThreads;
    constexpr int kScoreTiles = BN / 8;   // 8-column tiles of S = Q K^T
    constexpr int kOutputTiles = D / 8;   // 8-column tiles of O
    constexpr int kDimSteps = D / 16;     // k-steps of Q K^T
    constexpr int kKeySteps = BN / 16;    // k-steps of P V

    if (planted(p.fault, FaultKind::hang)) spin_forever();

    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T* q_tile = reinterpret_cast<T*>(shared_bytes);
    T* k_tiles = q_tile + BM * D;                     // kStages of them
    T* v_tiles = k_tiles + Tiles::kStages * BN * D;   // kStages of them
    constexpr bool kDoubleBuffered = Tiles::kStages == 2;

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    // Blocks start in reverse order: under the causal mask the last query
    // blocks have the most keys, and starting them first balances the tail.
    const int m0 = (gridDim.x - 1 - blockIdx.x) * BM;
    const size_t head_offset = static_cast<size_t>(blockIdx.y) * p.seq_len * D;
    const T* q = p.q + head_offset;
    const T* k = p.k + head_offset;
    const T* v = p.v + head_offset;

    const int key_tiles_total = (p.seq_len + BN - 1) / BN;
    const int key_tiles = kCausal ? min(key_tiles_total, (m0 + BM + BN - 1) / BN) : key_tiles_total;

    // Copy groups, oldest first: [Q, K0], then (double-buffered) [V0], then
    // per tile j the next [K], [V] (or with one stage [V_j] and [K_j+1]).
    load_tile<BM, D, kThreads>(q_tile, q, m0, p.seq_len, tid);
    load_tile<BN, D, kThreads>(k_tiles, k, 0, p.seq_len, tid);
    copy_commit();
    if constexpr (kDoubleBuffered) {
        load_tile<BN, D, kThreads>(v_tiles, v, 0, p.seq_len, tid);
        copy_commit();
        copy_wait<1>();
    } else {
        copy_wait<0>();
    }
    __syncthreads();

    std::uint32_t q_fragment[kDimSteps][4];
#pragma unroll
    for (int kk = 0; kk < kDimSteps; ++kk)
        ldmatrix_x4(q_fragment[kk], shared_address(q_tile + swizzled<D>(warp * 16 + (lane & 15), kk * 2 + (lane >> 4))));

    float o_acc[kOutputTiles][4];
#pragma unroll
    for (int t = 0; t < kOutputTiles; ++t) o_acc[t][0] = o_acc[t][1] = o_acc[t][2] = o_acc[t][3] = 0.f;
    // This thread's two rows are row0 and row0 + 8; their maxima are kept
    // in the scaled log2 domain.  The sums are per-thread partials, reduced
    // over the quad of threads that share a row only at the end.
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.f, 0.f};
    const int row0 = m0 + warp * 16 + (lane >> 2);

    for (int tile = 0; tile < key_tiles; ++tile) {
        const int n0 = tile * BN;
        const T* k_tile = k_tiles + (kDoubleBuffered ? (tile & 1) * BN * D : 0);
        const T* v_tile = v_tiles + (kDoubleBuffered ? (tile & 1) * BN * D : 0);
        if constexpr (kDoubleBuffered) {
            copy_wait<1>();   // K of this tile has landed (its V may still be in flight)
            __syncthreads();  // ... for every thread; and the other buffers are no longer read
            if (tile + 1 < key_tiles) {
                const int other = ((tile + 1) & 1) * BN * D;
                load_tile<BN, D, kThreads>(k_tiles + other, k, n0 + BN, p.seq_len, tid);
                copy_commit();
                load_tile<BN, D, kThreads>(v_tiles + other, v, n0 + BN, p.seq_len, tid);
            } else {
                copy_commit();  // empty groups keep the counting above uniform
            }
            copy_commit();
        } else {
            copy_wait<0>();   // K of this tile has landed
            __syncthreads();  // ... for every thread; and every warp is done with the last V
            load_tile<BN, D, kThreads>(v_tiles, v, n0, p.seq_len, tid);
            copy_commit();
        }

        float s[kScoreTiles][4];
#pragma unroll
        for (int t = 0; t < kScoreTiles; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < kDimSteps; ++kk) {
#pragma unroll
            for (int pair = 0; pair < kScoreTiles / 2; ++pair) {
                std::uint32_t k_fragment[4];
                ldmatrix_x4(k_fragment, shared_address(k_tile + swizzled<D>(pair * 16 + (lane & 7) + ((lane >> 4) << 3),
                                                                             kk * 2 + ((lane >> 3) & 1))));
                mma_16x8x16<T>(s[2 * pair], q_fragment[kk], k_fragment[0], k_fragment[1]);
                mma_16x8x16<T>(s[2 * pair + 1], q_fragment[kk], k_fragment[2], k_fragment[3]);
            }
        }

        // Keys past the end, and under the causal mask keys after the query.
        const bool needs_mask = n0 + BN > p.seq_len || (kCausal && n0 + BN - 1 > m0);
        if (needs_mask) {
#pragma unroll
            for (int t = 0; t < kScoreTiles; ++t)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int col = n0 + t * 8 + 2 * (lane & 3) + (e & 1);
                    const int row = row0 + (e >> 1) * 8;
                    if (col >= p.seq_len || (kCausal && col > row)) s[t][e] = -INFINITY;
                }
        }

        // Online softmax: new maximum, rescale what was accumulated, exponentiate.
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float top = row_max[i];
#pragma unroll
            for (int t = 0; t < kScoreTiles; ++t) top = fmaxf(top, fmaxf(s[t][2 * i], s[t][2 * i + 1]) * p.scale_log2);
            top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 1));
            top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 2));
            const float shift = top == -INFINITY ? 0.f : top;  // a row with every key masked so far
            const float correction = fast_exp2(row_max[i] - shift);
            row_max[i] = top;
            row_sum[i] *= correction;
#pragma unroll
            for (int t = 0; t < kOutputTiles; ++t) {
                o_acc[t][2 * i] *= correction;
                o_acc[t][2 * i + 1] *= correction;
            }
#pragma unroll
            for (int t = 0; t < kScoreTiles; ++t) {
                s[t][2 * i] = fast_exp2(fmaf(s[t][2 * i], p.scale_log2, -shift));
                s[t][2 * i + 1] = fast_exp2(fmaf(s[t][2 * i + 1], p.scale_log2, -shift));
                row_sum[i] += s[t][2 * i] + s[t][2 * i + 1];
            }
        }

        if constexpr (kDoubleBuffered) {
            copy_wait<2>();   // V of this tile has landed; the next K and V may be in flight
            __syncthreads();  // ... for every thread
        } else {
            copy_wait<0>();   // V of this tile has landed
            __syncthreads();  // ... for every thread; and every warp is done with K
            if (tile + 1 < key_tiles) {
                load_tile<BN, D, kThreads>(k_tiles, k, n0 + BN, p.seq_len, tid);
                copy_commit();
            }
        }

        // O += P V; the score accumulators of two adjacent 8-key tiles are
        // exactly the A fragment of one 16-key step.
#pragma unroll
        for (int kk = 0; kk < kKeySteps; ++kk) {
            const std::uint32_t p_fragment[4] = {
                pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int pair = 0; pair < kOutputTiles / 2; ++pair) {
                std::uint32_t v_fragment[4];
                ldmatrix_x4_trans(v_fragment,
                                  shared_address(v_tile + swizzled<D>(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3),
                                                                      pair * 2 + (lane >> 4))));
                mma_16x8x16<T>(o_acc[2 * pair], p_fragment, v_fragment[0], v_fragment[1]);
                mma_16x8x16<T>(o_acc[2 * pair + 1], p_fragment, v_fragment[2], v_fragment[3]);
            }
        }
    }

    float inverse[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        float sum = row_sum[i];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        inverse[i] = sum > 0.f ? 1.f / sum : 0.f;
    }
    T* o = p.o + head_offset;
#pragma unroll
    for (int t = 0; t < kOutputTiles; ++t)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int row = row0 + i * 8;
            if (row >= p.seq_len) continue;
            float first = o_acc[t][2 * i] * inverse[i];
            const float second = o_acc[t][2 * i + 1] * inverse[i];
            if (planted(p.fault, FaultKind::wrong_result) && row == 0 && t == 0 && (lane & 3) == 0) first += 1.f;
            *reinterpret_cast<std::uint32_t*>(o + static_cast<size_t>(row) * D + t * 8 + 2 * (lane & 3)) =
                pack2<T>(first, second);
        }
}

// The bf16 instantiations built for sm_75 trap at their first mma: the host
// never launches them there.
template <typename T, typename Tiles, bool kCausal>
__global__ void __launch_bounds__(Tiles::kThreads) attention_mma_kernel(AttentionParams<T> p) {
    attention_body<T, Tiles, kCausal>(p);
}

template <typename T, typename Tiles, bool kCausal>
cudaError_t launch_tiles(const void* q, const void* k, const void* v, void* o, const AttentionProblem& problem,
                         cudaStream_t stream, FaultKind fault) {
    const auto kernel = attention_mma_kernel<T, Tiles, kCausal>;
    if (cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  Tiles::kSharedBytes);
        status != cudaSuccess)
        return status;
    if (loading_kernels()) return load_kernel(kernel);
    AttentionParams<T> params{static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                              static_cast<T*>(o), problem.seq_len,
                              problem.scale * 1.4426950408889634f, fault};
    const dim3 grid((problem.seq_len + Tiles::kBlockM - 1) / Tiles::kBlockM, problem.batch * problem.heads);
    kernel<<<grid, Tiles::kThreads, Tiles::kSharedBytes, stream>>>(params);
    return cudaGetLastError();
}

template <typename T, int kHeadDim>
cudaError_t launch_dim(const void* q, const void* k, const void* v, void* o, const AttentionProblem& problem,
                       cudaStream_t stream, FaultKind fault, AttentionTiling tiling) {
    // 4 warps, one K/V stage: 48 KB of shared memory at head dim 128, so it
    // fits every target (Turing has 64 KB per block), and on an H100 it was
    // the fastest of the four shapes (bench/kernel_tiles_bench: 308
    // TFLOP/s bf16 at b4 h16 s4096 d128, against 284 with 8 warps).
    if (tiling == AttentionTiling::automatic) tiling = AttentionTiling::warps4;
    auto launch = [&](auto tiles) {
        using Tiles = decltype(tiles);
        return problem.causal ? launch_tiles<T, Tiles, true>(q, k, v, o, problem, stream, fault)
                              : launch_tiles<T, Tiles, false>(q, k, v, o, problem, stream, fault);
    };
    switch (tiling) {
        case AttentionTiling::warps4: return launch(AttentionTiles<kHeadDim, 4, 64, 1>{});
        case AttentionTiling::warps4_double_buffered: return launch(AttentionTiles<kHeadDim, 4, 64, 2>{});
        case AttentionTiling::warps8: return launch(AttentionTiles<kHeadDim, 8, 64, 1>{});
        case AttentionTiling::warps8_double_buffered: return launch(AttentionTiles<kHeadDim, 8, 64, 2>{});
        case AttentionTiling::automatic: break;
    }
    return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t launch_type(const void* q, const void* k, const void* v, void* o, const AttentionProblem& problem,
                        cudaStream_t stream, FaultKind fault, AttentionTiling tiling) {
    if (problem.head_dim == 64) return launch_dim<T, 64>(q, k, v, o, problem, stream, fault, tiling);
    if (problem.head_dim == 128) return launch_dim<T, 128>(q, k, v, o, problem, stream, fault, tiling);
    return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_attention_mma(ElementType type, const void* q, const void* k, const void* v, void* o,
                                 const AttentionProblem& problem, int compute_major, cudaStream_t stream,
                                 FaultKind fault, AttentionTiling tiling) {
    if (problem.seq_len < 1 || problem.batch < 1 || problem.heads < 1) return cudaErrorInvalidValue;
    if (type == ElementType::fp16)
        return launch_type<__half>(q, k, v, o, problem, stream, fault, tiling);
    if (compute_major < 8) return cudaErrorNotSupported;  // no bf16 tensor cores
    return launch_type<__nv_bfloat16>(q, k, v, o, problem, stream, fault, tiling);
}

}  // namespace provision::kernels::detail
