// Host entry points of the checks' .cu files, for the check harness in
// kernels/.  Internal to kernels/: the rest of the project sees
// validation_kernels.h (and the link checks buffer_kernels.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "attention_problem.h"
#include "fault_injection.h"
#include "fp8_codes.h"
#include "numeric_formats.h"

namespace provision::kernels::detail {

// Tile shapes of the mma.sync attention kernel: 4 or 8 warps of 16 query
// rows each, 64-key tiles, single- or double-buffered K/V.  `automatic`
// picks by compute capability; the others exist for tile benchmarks.
enum class AttentionTiling { automatic, warps4, warps4_double_buffered, warps8, warps8_double_buffered };

// Tile shapes of the TF32 GEMM, likewise; `automatic` takes the wgmma
// kernel on sm_90 where the build has it, `wgmma` insists on it.
enum class GemmTiling { automatic, block128x128_warps8, block128x128_warps4, block128x256_warps8, wgmma };

// The fused attention forward through mma.sync (online softmax in registers,
// scores never leave the chip).  q, k, v, o: [batch, heads, seq_len,
// head_dim] of `type`; head_dim 64 or 128; any seq_len >= 1.  bf16 needs
// compute_major >= 8.
cudaError_t launch_attention_mma(ElementType type, const void* q, const void* k, const void* v, void* o,
                                 const AttentionProblem& problem, int compute_major, cudaStream_t stream,
                                 FaultKind fault, AttentionTiling tiling = AttentionTiling::automatic);

// Whether the wgmma attention's two consumer warpgroups take turns on the
// tensor cores: `automatic` does when causal or seq_len >= 8192
// (docs/KERNELS.md); the others exist for tuning.
enum class AttentionTurns { automatic, plain, pingpong };

// The fused attention forward for bf16 through Hopper's warpgroup
// instructions (wgmma, TMA): built for sm_90a only, cudaErrorNotSupported on
// other devices.  Shapes as launch_attention_mma; q, k, v, o 16-byte
// aligned, batch * heads at most 65535.
cudaError_t launch_attention_bf16_wgmma(const void* q, const void* k, const void* v, void* o,
                                        const AttentionProblem& problem, cudaStream_t stream, FaultKind fault,
                                        AttentionTurns turns = AttentionTurns::automatic);

// The simple reference: one warp per query row, two passes over the keys,
// fp32 arithmetic.  With input_precision, every intermediate the plain
// framework computation would store in the input type (scores, scaled
// scores, probabilities, output) is rounded to it.  Writes float outputs for
// the first `pairs` (batch, head) pairs only.
cudaError_t launch_attention_reference(ElementType type, bool input_precision, const void* q, const void* k,
                                       const void* v, float* o, const AttentionProblem& problem, int pairs,
                                       cudaStream_t stream);

// An attention output tallied against the references on the GPU, as the
// host's judgement tallies it (attention_judge.h): the never-written and
// NaN elements counted, and the maxima of |out - ref|, |ref| (the kernel's
// output against the fp32 reference) and |low - ref|, |ref| (the
// input-precision reference against it), in double, each kept as the bits
// of a non-negative double (whose order is the numbers' order, so that an
// integer maximum is their maximum).
struct AttentionTally {
    unsigned long long unwritten;
    unsigned long long nan;
    unsigned long long kernel_worst, kernel_scale;
    unsigned long long input_worst, input_scale;
    unsigned kernel_nan, input_nan;  // nonzero: a NaN in that comparison
};

// Tallies `count` elements of `output` (`type`'s bits) against `reference32`
// and `reference_low` into *tally, which the caller zeroes before.
cudaError_t launch_attention_tally(ElementType type, const std::uint16_t* output, const float* reference32,
                                   const float* reference_low, std::size_t count, AttentionTally* tally,
                                   cudaStream_t stream);

// c[m, n] = sum_k a[m, k] * b[n, k] on TF32 tensor cores (sm_80+), fp32
// accumulation, operands rounded to TF32 (ties away from zero).  Row-major
// operands, k a multiple of 4.
cudaError_t launch_gemm_tf32(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                             FaultKind fault, GemmTiling tiling = GemmTiling::automatic);

// "wgmma" or "mma.sync": the kernel `automatic` picks on this device.
const char* gemm_tf32_path(int major, int minor);

// Who rounds the wgmma GEMM's operands to TF32 (the tensor cores would
// truncate them, which misses the check's bound): nobody (a tuning aid),
// three producer warps or the two consumer warpgroups in shared memory, or
// an elementwise pass into scratch copies before the GEMM (the fastest at
// 4096^3 and up: docs/KERNELS.md, the wgmma TF32 GEMM).  automatic: the pass
// from 2048^3 up, the consumers below, where the pass's scratch costs more
// than it saves (a process's first stream-ordered allocation creates the
// memory pool: 10-12 ms).
enum class GemmRounding { none, producer, consumer, prepass, automatic };

// The same product through Hopper's warpgroup instructions (wgmma, TMA):
// built for sm_90a only, cudaErrorNotSupported on other devices.  A and B
// 16-byte aligned.  batch: 16-byte loads in flight per rounding thread.
cudaError_t launch_gemm_tf32_wgmma(const float* a, const float* b, float* c, int m, int n, int k,
                                   cudaStream_t stream, FaultKind fault,
                                   GemmRounding rounding = GemmRounding::automatic, int batch = 4);

// c[m, n] = (sum_k a[m, k] * b[n, k]) * scale on the fp8 tensor cores
// through mma.sync m16n8k32 (sm_89 and newer), any pairing of e4m3 and e5m2;
// fp32 accumulation, promoted out of the tensor cores every 128 products;
// a: [m, k], b: [n, k] codes, k contiguous and a multiple of 16; c fp32.
cudaError_t launch_gemm_fp8(Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a, const std::uint8_t* b,
                            float* c, int m, int n, int k, float scale, cudaStream_t stream, FaultKind fault);

// The same product through Hopper's warpgroup instructions (wgmma, TMA):
// built for sm_90a only, cudaErrorNotSupported on other devices; a and b
// 16-byte aligned.
cudaError_t launch_gemm_fp8_wgmma(Fp8Format a_format, Fp8Format b_format, const std::uint8_t* a,
                                  const std::uint8_t* b, float* c, int m, int n, int k, float scale,
                                  cudaStream_t stream, FaultKind fault);

// Fills a buffer with random fp8 codes, element i from random_bits(seed, i)
// as fp8_codes.h draws them on the host.
cudaError_t launch_fill_fp8(Fp8Format format, Fp8Spread spread, std::uint8_t* out, std::size_t count,
                            std::uint64_t seed, cudaStream_t stream);

// Fills a buffer with standard-normal values from a counter-based hash:
// the same seed gives the same data on every GPU.
cudaError_t launch_fill_normal(ElementType type, void* out, std::size_t count, std::uint64_t seed,
                               cudaStream_t stream);
cudaError_t launch_fill_normal_float(float* out, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// A kernel that never returns: the planted hang for checks whose kernel has
// no fault switch of its own.  Defined in fault-injection builds alone; call
// it only where planted() holds.
cudaError_t launch_spin_forever(cudaStream_t stream);

}  // namespace provision::kernels::detail
