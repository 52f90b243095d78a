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

// The two 8-bit formats of the OCP 8-bit floating point specification (v1.0),
// as the fp8 tensor cores (sm_89 and newer) read them:
//   e4m3 (PyTorch's float8_e4m3fn): exponent bias 7, 3 mantissa bits, no
//     infinities; S.1111.111 is NaN, so the largest value is S.1111.110 =
//     +-448; subnormals (exponent field 0) are m * 2^-9.
//   e5m2 (float8_e5m2): IEEE-style, bias 15, 2 mantissa bits; S.11111.00 is
//     +-infinity and S.11111.{01,10,11} NaN; largest +-57344; subnormals
//     m * 2^-16.  It is the upper byte of an IEEE binary16.
enum class Fp8Format { e4m3, e5m2 };

const char* fp8_format_name(Fp8Format format);

// The value of an fp8 code; every one is exact in float (and double).
float fp8_bits_to_float(Fp8Format format, std::uint8_t bits);

// Neither NaN nor infinite.
bool fp8_is_finite(Fp8Format format, std::uint8_t bits);

}  // namespace provision::kernels
