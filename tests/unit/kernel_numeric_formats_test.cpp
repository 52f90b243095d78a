#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "numeric_formats.h"

using namespace provision::kernels;

TEST_CASE("fp16 encoding rounds to nearest even and saturates to infinity", "[kernels][formats]") {
    CHECK(float_to_half_bits(1.0f) == 0x3C00);
    CHECK(float_to_half_bits(-2.0f) == 0xC000);
    CHECK(float_to_half_bits(65504.0f) == 0x7BFF);   // largest finite half
    CHECK(float_to_half_bits(65520.0f) == 0x7C00);   // halfway to 65536: the even neighbour is infinity
    CHECK(float_to_half_bits(65519.0f) == 0x7BFF);
    CHECK(float_to_half_bits(1.0f + 0x1p-11f) == 0x3C00);             // tie, 0x3C00 is even
    CHECK(float_to_half_bits(1.0f + 3 * 0x1p-11f) == 0x3C02);         // tie, rounds up to even
    CHECK(float_to_half_bits(0x1p-24f) == 0x0001);                    // smallest subnormal
    CHECK(float_to_half_bits(0x1p-25f) == 0x0000);                    // tie with zero: even
    CHECK(float_to_half_bits(0x1.8p-25f) == 0x0001);
    CHECK(float_to_half_bits(0x1p-14f) == 0x0400);                    // smallest normal
    CHECK(float_to_half_bits(0x1.ffcp-15f) == 0x0400);                // subnormal that rounds up into the normals
    CHECK(std::isnan(half_bits_to_float(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("every finite fp16 value survives a round trip through float", "[kernels][formats]") {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto half = static_cast<std::uint16_t>(bits);
        const float value = half_bits_to_float(half);
        if (std::isnan(value)) continue;
        REQUIRE(float_to_half_bits(value) == half);
    }
    CHECK(half_bits_to_float(0x0001) == 0x1p-24f);
    CHECK(half_bits_to_float(0xFC00) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("bf16 keeps float's exponent and rounds the mantissa to nearest even", "[kernels][formats]") {
    CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
    CHECK(bf16_bits_to_float(0x3F80) == 1.0f);
    CHECK(float_to_bf16_bits(1.0f + 0x1p-8f) == 0x3F80);      // tie, even stays
    CHECK(float_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3F82);  // tie, rounds to even
    CHECK(float_to_bf16_bits(1.0f + 0x1.2p-8f) == 0x3F81);    // above the tie
    CHECK(float_to_bf16_bits(3.0e38f) == 0x7F62);
    CHECK(std::isinf(bf16_bits_to_float(float_to_bf16_bits(3.4028235e38f))));  // rounds past the largest
    CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const float value = bf16_bits_to_float(static_cast<std::uint16_t>(bits));
        if (!std::isnan(value)) REQUIRE(float_to_bf16_bits(value) == bits);
    }
}

TEST_CASE("TF32 rounding keeps 10 mantissa bits, ties away from zero", "[kernels][formats]") {
    CHECK(round_to_tf32(1.0f) == 1.0f);
    CHECK(round_to_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);    // tie: away from zero
    CHECK(round_to_tf32(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f);
    CHECK(round_to_tf32(1.0f + 0x1p-12f) == 1.0f);
    CHECK((std::bit_cast<std::uint32_t>(round_to_tf32(3.14159265f)) & 0x1FFFu) == 0);
    CHECK(std::fabs(round_to_tf32(3.14159265f) - 3.14159265f) <= 3.14159265f * 0x1p-11f);
    CHECK(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
}

TEST_CASE("the poison pattern is a NaN in both 16-bit formats", "[kernels][formats]") {
    CHECK(std::isnan(half_bits_to_float(kPoison16)));
    CHECK(std::isnan(bf16_bits_to_float(kPoison16)));
    CHECK(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) != kPoison16);
}
