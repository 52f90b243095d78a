// The fp8 decode against the OCP 8-bit floating point definitions, code by
// code: the fp8 checks' references are only as good as it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <set>

#include "numeric_formats.h"

using namespace provision::kernels;

namespace {

// The definition, written out field by field: (-1)^s * 2^(e - bias) *
// (1 + m / 2^mbits) for normal codes, (-1)^s * 2^(1 - bias) * (m / 2^mbits)
// for exponent field 0.
double defined_value(int sign, int exponent, int mantissa, int bias, int mantissa_bits) {
    const double fraction = mantissa / std::pow(2.0, mantissa_bits);
    const double magnitude = exponent == 0 ? std::pow(2.0, 1 - bias) * fraction
                                           : std::pow(2.0, exponent - bias) * (1.0 + fraction);
    return sign ? -magnitude : magnitude;
}

}  // namespace

TEST_CASE("every e4m3 code decodes to its defined value; S.1111.111 is NaN and there is no infinity",
          "[kernels][formats][fp8]") {
    int nan = 0;
    for (int code = 0; code < 256; ++code) {
        const auto bits = static_cast<std::uint8_t>(code);
        const int sign = code >> 7, exponent = (code >> 3) & 0xF, mantissa = code & 0x7;
        const float value = fp8_bits_to_float(Fp8Format::e4m3, bits);
        INFO("code 0x" << std::hex << code);
        CHECK_FALSE(std::isinf(value));
        if (exponent == 0xF && mantissa == 0x7) {
            CHECK(std::isnan(value));
            CHECK_FALSE(fp8_is_finite(Fp8Format::e4m3, bits));
            ++nan;
            continue;
        }
        CHECK(fp8_is_finite(Fp8Format::e4m3, bits));
        CHECK(static_cast<double>(value) == defined_value(sign, exponent, mantissa, 7, 3));
        CHECK(std::signbit(value) == (sign == 1));
    }
    CHECK(nan == 2);
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x7E) == 448.0f);      // the largest
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0xFE) == -448.0f);
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x78) == 256.0f);      // S.1111.000 is a number, not infinity
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x38) == 1.0f);
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x08) == 0x1p-6f);     // smallest normal
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x07) == 0x1.cp-7f);   // largest subnormal: 7/8 * 2^-6
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x01) == 0x1p-9f);     // smallest subnormal
    CHECK(fp8_bits_to_float(Fp8Format::e4m3, 0x00) == 0.0f);
    CHECK(std::signbit(fp8_bits_to_float(Fp8Format::e4m3, 0x80)));  // -0
}

TEST_CASE("every e5m2 code decodes to its defined value, with IEEE infinities and NaNs",
          "[kernels][formats][fp8]") {
    int nan = 0, infinite = 0;
    for (int code = 0; code < 256; ++code) {
        const auto bits = static_cast<std::uint8_t>(code);
        const int sign = code >> 7, exponent = (code >> 2) & 0x1F, mantissa = code & 0x3;
        const float value = fp8_bits_to_float(Fp8Format::e5m2, bits);
        INFO("code 0x" << std::hex << code);
        // e5m2 is the upper byte of an IEEE binary16, NaNs and infinities included.
        const float as_half = half_bits_to_float(static_cast<std::uint16_t>(code << 8));
        if (exponent == 0x1F) {
            CHECK_FALSE(fp8_is_finite(Fp8Format::e5m2, bits));
            if (mantissa == 0) {
                CHECK(value == (sign ? -INFINITY : INFINITY));
                ++infinite;
            } else {
                CHECK(std::isnan(value));
                ++nan;
            }
            CHECK(std::isnan(value) == std::isnan(as_half));
            continue;
        }
        CHECK(fp8_is_finite(Fp8Format::e5m2, bits));
        CHECK(static_cast<double>(value) == defined_value(sign, exponent, mantissa, 15, 2));
        CHECK(value == as_half);
    }
    CHECK(nan == 6);
    CHECK(infinite == 2);
    CHECK(fp8_bits_to_float(Fp8Format::e5m2, 0x7B) == 57344.0f);    // the largest
    CHECK(fp8_bits_to_float(Fp8Format::e5m2, 0x3C) == 1.0f);
    CHECK(fp8_bits_to_float(Fp8Format::e5m2, 0x04) == 0x1p-14f);    // smallest normal
    CHECK(fp8_bits_to_float(Fp8Format::e5m2, 0x01) == 0x1p-16f);    // smallest subnormal
    CHECK(fp8_bits_to_float(Fp8Format::e5m2, 0x03) == 0x1.8p-15f);  // largest subnormal: 3/4 * 2^-14
}

TEST_CASE("the finite fp8 codes of each sign are strictly increasing in magnitude", "[kernels][formats][fp8]") {
    for (const Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
        INFO(fp8_format_name(format));
        std::set<float> values;
        float previous = -1;
        for (int code = 0; code < 128; ++code) {
            const auto bits = static_cast<std::uint8_t>(code);
            if (!fp8_is_finite(format, bits)) break;
            const float value = fp8_bits_to_float(format, bits);
            CHECK(value > previous);
            CHECK(fp8_bits_to_float(format, static_cast<std::uint8_t>(code | 0x80)) == -value);
            previous = value;
            values.insert(value);
            values.insert(-value);
        }
        // +0 and -0 are one value: e4m3 has 253 distinct finite values, e5m2 247.
        CHECK(values.size() == (format == Fp8Format::e4m3 ? 253u : 247u));
    }
}
