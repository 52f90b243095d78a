// Host-side conversions between float and the narrow formats the kernels
// compute in.  Bit-exact with the GPU's own conversions (__float2half_rn,
// __float2bfloat16_rn, cvt.rna.tf32.f32), so the host can decode kernel
// outputs and emulate input rounding without a CUDA header.
#pragma once

#include <cstdint>

namespace provision::kernels {

// The 16-bit element types of the attention checks.
enum class ElementType { fp16, bf16 };

const char* element_type_name(ElementType type);

// IEEE binary16, round to nearest even; overflow gives infinity.
std::uint16_t float_to_half_bits(float value);
float half_bits_to_float(std::uint16_t bits);

// bfloat16 (the upper half of a float), round to nearest even.
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);

std::uint16_t float_to_bits(ElementType type, float value);
float bits_to_float(ElementType type, std::uint16_t bits);

// TF32 keeps float's exponent and 10 mantissa bits; the tensor cores' input
// conversion rounds to nearest with ties away from zero.
float round_to_tf32(float value);

// The bit pattern an output buffer is filled with before a kernel runs: a
// NaN no conversion produces, so an element still holding it was never written.
inline constexpr std::uint16_t kPoison16 = 0xFFFF;

}  // namespace provision::kernels
