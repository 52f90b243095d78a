// Standard-normal test inputs drawn on the host from the same counter hash
// as the GPU's fill (random_fill.cu): a check's host half makes its inputs
// and fp64 references before the device is open, so the worker computes
// them while the CUDA context is still being created.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "numeric_formats.h"

namespace provision::kernels {

// `count` values, element i drawn from (seed, i) alone: the same on every
// thread count and machine.
std::vector<float> normal_floats(std::size_t count, std::uint64_t seed);

// The same values rounded to a 16-bit element type, as bit patterns.
std::vector<std::uint16_t> normal_bits(ElementType type, std::size_t count, std::uint64_t seed);

}  // namespace provision::kernels
