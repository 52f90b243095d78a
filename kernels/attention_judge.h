// The judgement of an attention check's output: element by element against
// the best reference (the CPU's fp64 one where it ran, else the GPU's fp32
// one), with the input-precision reference setting the bound (tolerance.h).
// The same tally runs on the host (tally) and, for the shapes only the
// GPU's references judge, on the GPU (launch_attention_tally), so that only
// a few bytes of those come back.  Internal to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attention_problem.h"
#include "kernel_launchers.h"
#include "numeric_formats.h"
#include "tolerance.h"

namespace provision::kernels::detail {

// What one shape showed.
struct Verdict {
    std::string shape;
    double error = 0;
    double tolerance = 0;
    std::string problem;  // empty when the shape passed
    double ratio() const;
};

// What a part of one shape's output showed.
struct Tally {
    std::size_t unwritten = 0, nan = 0;
    ErrorExtent kernel;           // the output against the best reference
    ErrorExtent input_precision;  // the input-precision reference against it
    ErrorExtent agreement;        // the fp32 GPU reference against the fp64 one, where that ran

    void merge(const Tally& other);
};

// One shape's output and references as the host's judgement reads them.
// The references cover the first (batch, head) pairs (all of them in the
// quick shapes, the first in a benchmark); reference64 is empty unless the
// CPU reference ran.
struct JudgedShape {
    AttentionProblem problem;
    std::span<const std::uint16_t> output;
    std::span<const float> reference32, reference_low;
    std::span<const double> reference64;
};

// Elements [begin, end) of one shape.
Tally tally(const JudgedShape& shape, ElementType type, std::size_t begin, std::size_t end);

// What the GPU's tally (launch_attention_tally) holds, as a Tally.
Tally tally_of(const AttentionTally& counted);

// `elements`: the output's size; `fp64`: whether the CPU reference ran.
Verdict verdict_of(const AttentionProblem& problem, std::size_t elements, bool fp64, const Tally& tally);

// Judges the shapes on the host's cores.
std::vector<Verdict> judge(const std::vector<JudgedShape>& shapes, ElementType type);

}  // namespace provision::kernels::detail
