#include "numeric_formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace provision::kernels {

const char* element_type_name(ElementType type) { return type == ElementType::fp16 ? "fp16" : "bf16"; }

std::uint16_t float_to_half_bits(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
    // At or above halfway between 65504 and 65536 the even neighbour is infinity.
    if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (magnitude < 0x38800000u) {                       // below 2^-14: subnormal half
        if (magnitude < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below 2^-25
        const std::uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - static_cast<int>(magnitude >> 23);          // 14 ... 24
        std::uint32_t result = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
        return static_cast<std::uint16_t>(sign | result);
    }
    std::uint32_t result = (magnitude - 0x38000000u) >> 13;  // rebias the exponent from 127 to 15
    const std::uint32_t rest = magnitude & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // a carry correctly bumps the exponent
    return static_cast<std::uint16_t>(sign | result);
}

float half_bits_to_float(std::uint16_t bits) {
    const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
    const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_bits(ElementType type, float value) {
    return type == ElementType::fp16 ? float_to_half_bits(value) : float_to_bf16_bits(value);
}

float bits_to_float(ElementType type, std::uint16_t bits) {
    return type == ElementType::fp16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
}

float round_to_tf32(float value) {
    if (!std::isfinite(value)) return value;
    // Adding half of the dropped part to the magnitude, then truncating,
    // rounds ties away from zero.
    const auto bits = std::bit_cast<std::uint32_t>(value);
    return std::bit_cast<float>((bits + 0x1000u) & 0xFFFFE000u);
}

const char* fp8_format_name(Fp8Format format) { return format == Fp8Format::e4m3 ? "e4m3" : "e5m2"; }

bool fp8_is_finite(Fp8Format format, std::uint8_t bits) {
    const unsigned magnitude = bits & 0x7Fu;
    return format == Fp8Format::e4m3 ? magnitude != 0x7Fu : magnitude < 0x7Cu;
}

float fp8_bits_to_float(Fp8Format format, std::uint8_t bits) {
    const bool negative = (bits & 0x80u) != 0;
    const int mantissa_bits = format == Fp8Format::e4m3 ? 3 : 2;
    const int bias = format == Fp8Format::e4m3 ? 7 : 15;
    const int exponent = (bits & 0x7Fu) >> mantissa_bits;
    const int mantissa = bits & ((1u << mantissa_bits) - 1);
    const int top_exponent = (1 << (7 - mantissa_bits)) - 1;
    float magnitude;
    if (format == Fp8Format::e4m3 && exponent == top_exponent && mantissa == (1 << mantissa_bits) - 1) {
        magnitude = std::numeric_limits<float>::quiet_NaN();
    } else if (format == Fp8Format::e5m2 && exponent == top_exponent) {
        magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    } else if (exponent == 0) {  // subnormal: no implicit leading one
        magnitude = std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits);
    } else {
        magnitude = std::ldexp(static_cast<float>((1 << mantissa_bits) + mantissa), exponent - bias - mantissa_bits);
    }
    return negative ? -magnitude : magnitude;
}

}  // namespace provision::kernels
