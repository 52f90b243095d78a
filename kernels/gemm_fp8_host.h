// The host half of the fp8 GEMM checks (gemm.fp8, gemm.fp8.wgmma): the
// inputs drawn from the seed, the fp64 reference, the accumulation reference
// and the tolerance, and the judgement of a kernel's output.  Plain C++, no
// CUDA call: it can run on a thread while the GPU's context is being
// created, and the unit tests run it without a GPU.  The device half
// (upload, launch, download, judge) is run_gemm_fp8_device in checks.h.
//
// The product is torch._scaled_mm's with per-tensor scales:
//     c = (a . b^T) * (scale_a * scale_b)
// a: [m, k] and b: [n, k] fp8 codes, k contiguous (both operands K-major, the
// only layout fp8 tensor cores read); c: [m, n] fp32; the two fp32 scales
// multiply the fp32 accumulator in the epilogue.
//
// Tolerance rule (kernels/tolerance.h's, with the accumulation in place of
// the input rounding: fp8 inputs are exact, so all the error is in the sum):
//     error(kernel) <= 2 * error(accumulation reference) + 1e-6
// Errors are max-norm relative errors against the fp64 reference: the exact
// products of the decoded inputs (8 significant bits each, exact in fp64)
// summed in fp64, times the scales.  The accumulation reference adds the same
// products the way fp32 accumulation on fp8 tensor cores may: the tensor
// cores of Ada and Hopper do not keep fp32 inside an fp8 matrix instruction
// but an accumulator of 13 fraction bits ("FP22", e8m13) that aligns every
// addend (the 32 products of one k32 instruction and the incoming
// accumulator) to the largest one's exponent and truncates toward zero
// (DeepSeek-V3 technical report, section 3.3.2: "around 14 bits"; Hawkeye's
// H100 QGMMA model, bit-exact against wgmma m64n128k32 e4m3).  Both kernels
// therefore chain only four instructions (128 products) in the tensor cores
// and add each such partial sum to fp32 registers on the CUDA cores, as
// DeepGEMM does.  The hardware aligns to the largest product's unnormalised
// exponent, so its truncation step can be up to twice 2^(e-13) of the
// largest value: the model keeps 12 fraction bits, never finer than the
// hardware, and the factor 2 covers the order of additions and a second
// truncation inside an instruction.  The floor covers the fp32 rounding of
// the output and of the scale multiplication (2^-24 each, relative).
// The sweeps, one product per output element, are held element by element
// (|out - ref| / |ref| for each element, a nonzero where 0 is due counting
// as infinite): there every code must come out exact but for that rounding,
// so a subnormal read as zero shows even beside 57344.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numeric_formats.h"

namespace provision::kernels {

inline constexpr double kFp8GemmFloor = 1e-6;

// How the tensor cores add fp8 products (see the rule above).
struct Fp8AccumulatorModel {
    int instruction_k = 32;        // products one matrix instruction adds at once
    int promotion_interval = 128;  // products chained in the tensor cores before joining the fp32 sum
    int fraction_bits = 12;        // bits kept below the largest addend's leading bit
};

// One problem of the quick set: inputs, the fp64 reference and the bound.
struct Fp8GemmProblem {
    std::string label;                 // "e4m3 x e5m2, 136x96x320, moderate"
    Fp8Format a_format = Fp8Format::e4m3;
    Fp8Format b_format = Fp8Format::e4m3;
    int m = 0, n = 0, k = 0;           // k a multiple of 16, as torch._scaled_mm needs
    std::vector<std::uint8_t> a;       // [m, k] codes
    std::vector<std::uint8_t> b;       // [n, k] codes
    float scale_a = 1, scale_b = 1;
    float scale = 1;                   // scale_a * scale_b in fp32: what the epilogue multiplies by
    bool per_element = false;          // judged element by element (the sweeps)
    std::vector<double> exact;         // [m, n] fp64 reference
    double accumulation_error = 0;     // the accumulation reference's error against `exact`
    double tolerance = 0;              // 2 * accumulation_error + kFp8GemmFloor
};

// What the host half hands to the device half.
struct Fp8GemmInputs {
    std::uint64_t seed = 0;
    bool full = false;                 // the device half also times and spot-checks 8192^3
    std::vector<Fp8GemmProblem> problems;
};

// The host half: every quick problem's inputs, references and tolerance,
// from the seed alone.  For each pairing (e4m3 x e4m3, e4m3 x e5m2,
// e5m2 x e5m2): every finite code of each operand's format once against an
// identity (the result must be exact), moderate values at tile-edge sizes,
// and full-range values with their subnormals.
Fp8GemmInputs prepare_gemm_fp8_inputs(std::uint64_t seed, bool full);

// One output element's sum (before scaling) of `count` exact products, as
// the accumulator model adds them: groups of model.promotion_interval
// chained in steps of model.instruction_k, each group then added to an fp32
// sum in order.
float accumulate_fp8_products(const double* products, int count, const Fp8AccumulatorModel& model = {});

// The exact dot product of a row of a and a row of b (k codes each), in fp64.
double exact_fp8_dot(Fp8Format a_format, const std::uint8_t* a_row, Fp8Format b_format, const std::uint8_t* b_row,
                     int k);

// The same dot product as the accumulator model adds it.
float modelled_fp8_dot(Fp8Format a_format, const std::uint8_t* a_row, Fp8Format b_format, const std::uint8_t* b_row,
                       int k, const Fp8AccumulatorModel& model = {});

// The whole problem as the model computes it, scaled in fp32 like the
// kernels' epilogue.
std::vector<float> modelled_gemm_fp8(const Fp8GemmProblem& problem, const Fp8AccumulatorModel& model = {});

struct Fp8GemmVerdict {
    std::string shape;
    double error = 0;
    double tolerance = 0;
    std::string problem;               // empty when the output passed
    double ratio() const;              // error / tolerance
};

// Judges a kernel's output ([m, n] fp32, the buffer filled with 0xFF bytes
// before the launch, so an element still NaN with all bits set was never
// written).
Fp8GemmVerdict judge_gemm_fp8(const Fp8GemmProblem& problem, std::span<const float> output);

// Judges a large product by samples: every element of `output` must be
// written and not NaN; the elements at `samples` are held against their fp64
// values (`exact`, same order), the bound from the same elements as the
// model adds them (`modelled`).
Fp8GemmVerdict judge_gemm_fp8_samples(const std::string& shape, const std::vector<float>& output,
                                      const std::vector<std::size_t>& samples, const std::vector<double>& exact,
                                      const std::vector<float>& modelled);

}  // namespace provision::kernels
