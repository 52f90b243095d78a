// The individual checks behind prepare_check, each in two halves: the host
// half (inputs from the seed and the fp64 references on the CPU, no CUDA
// call) and the device half (upload, launch, download, judge).  Internal
// to kernels/.
#pragma once

#include <cstdint>
#include <vector>

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

// One shape of the attention check, as the host half made it.
struct AttentionShapeInputs {
    AttentionProblem problem;
    // [batch, heads, seq_len, head_dim] in the element type, with the fp64
    // CPU reference, for the shapes small enough for it; else all empty, and
    // the device half draws the inputs on the GPU from the same seed.
    std::vector<std::uint16_t> q, k, v;
    std::vector<double> reference64;
    // Where the device half's output and GPU references land, sized (and so
    // touched) by the host half: a fresh page costs a fault, which the host
    // half takes while the context is still being created.  Empty for the
    // shapes without the fp64 reference: the GPU judges those.
    std::vector<std::uint16_t> output;
    std::vector<float> reference32, reference_low;
};

struct AttentionInputs {
    ElementType type = ElementType::fp16;
    std::uint64_t seed = 1;
    std::vector<AttentionShapeInputs> shapes;
};

// Several small shapes (head dims 64 and 128, causal and not, lengths that
// are no multiple of a tile) with their fp64 references.
AttentionInputs prepare_attention_inputs(ElementType type, std::uint64_t seed);

// Runs the attention kernel on the prepared shapes against the references,
// and with context.full times it at batch 4, 16 heads, 4096 tokens, head
// dim 128.  The results land in each shape's buffers.  Throws CudaFailure
// for CUDA errors.
CheckResult run_attention_check(const CheckContext& context, AttentionKernel kernel, AttentionInputs& inputs);

// One shape of the TF32 GEMM check.
struct GemmShapeInputs {
    int m = 0, n = 0, k = 0;
    std::vector<float> a, b;       // row-major, K contiguous
    std::vector<double> exact;     // the fp64 product of a and b
    std::vector<double> tf32;      // the fp64 product of a and b rounded to TF32
};

struct GemmInputs {
    std::uint64_t seed = 1;
    std::vector<GemmShapeInputs> shapes;
};

GemmInputs prepare_gemm_tf32_inputs(std::uint64_t seed);

// The TF32 GEMM against the fp64 references; with context.full timed at 8192^3.
CheckResult run_gemm_tf32_check(const CheckContext& context, const GemmInputs& inputs);

// Which fp8 GEMM kernel the check drives.
enum class Fp8GemmKernel { mma_sync, wgmma };

// The device half of the fp8 GEMM checks: uploads each problem the host
// half prepared (prepare_gemm_fp8_inputs, gemm_fp8_host.h), runs the kernel
// on it with its output poisoned, downloads and judges it; with inputs.full
// it also draws e4m3 inputs on the GPU, times 8192^3 and spot-checks it.
// Throws CudaFailure for CUDA errors.
CheckResult run_gemm_fp8_device(const CheckContext& context, const Fp8GemmInputs& inputs, Fp8GemmKernel kernel);

// "b2 h3 s200 d64 causal"
std::string describe_shape(const AttentionProblem& problem);

}  // namespace provision::kernels::detail
