// The individual checks behind run_check.  Internal to kernels/.
#pragma once

#include <cstdint>

#include "gemm_fp8_host.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "validation_kernels.h"

namespace provision::kernels::detail {

struct CheckContext {
    int device = 0;
    int major = 0;             // compute capability of the device
    int minor = 0;
    std::uint64_t seed = 1;    // inputs derive from it, so a failure can be replayed
    bool full = false;         // also measure throughput at a large shape
    FaultKind fault = FaultKind::none;
};

// Which fused attention kernel the check drives.
enum class AttentionKernel { mma, wgmma };

// Runs the attention kernel on several small shapes (head dims 64 and 128,
// causal and not, lengths that are no multiple of a tile) against the
// references, and with context.full times it at batch 4, 16 heads, 4096
// tokens, head dim 128.  Throws CudaFailure for CUDA errors.
CheckResult run_attention_check(const CheckContext& context, ElementType type, AttentionKernel kernel);

// The TF32 GEMM against fp64 on the CPU; with context.full timed at 8192^3.
CheckResult run_gemm_tf32_check(const CheckContext& context);

// Which fp8 GEMM kernel the check drives.
enum class Fp8GemmKernel { mma_sync, wgmma };

// The device half of the fp8 GEMM checks: uploads each problem the host
// half prepared (prepare_gemm_fp8_inputs, gemm_fp8_host.h), runs the kernel
// on it with its output poisoned, downloads and judges it; with inputs.full
// it also draws e4m3 inputs on the GPU, times 8192^3 and spot-checks it.
// Throws CudaFailure for CUDA errors.
CheckResult run_gemm_fp8_device(const CheckContext& context, const Fp8GemmInputs& inputs, Fp8GemmKernel kernel);

// Both halves in a row: what run_check does for gemm.fp8 and gemm.fp8.wgmma.
CheckResult run_gemm_fp8_check(const CheckContext& context, Fp8GemmKernel kernel);

// "b2 h3 s200 d64 causal"
std::string describe_shape(const AttentionProblem& problem);

}  // namespace provision::kernels::detail
