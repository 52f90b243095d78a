// Random fp8 codes for the fp8 checks, the same on the host (the quick
// shapes, whose inputs the host half draws) and on the GPU (the full-mode
// shape, too large to draw on the host): a counter hashed by splitmix64's
// finaliser, then mapped to a code.  Plain C++ that nvcc also compiles for the
// device; no CUDA header.
#pragma once

#include <cstdint>

#include "numeric_formats.h"

#if defined(__CUDACC__)
#define PROVISION_HOST_DEVICE __host__ __device__
#else
#define PROVISION_HOST_DEVICE
#endif

namespace provision::kernels {

PROVISION_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Uniform random bits for element `index` of stream `seed`.
PROVISION_HOST_DEVICE inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index) {
    return mix64(seed ^ mix64(index));
}

// How the random codes spread:
//   moderate    magnitudes from 2^-3 to 2^4 (exponent field within 3 of the
//               bias), either sign, one code in 32 a subnormal: the products
//               are alike in size, so each one shows in a sum;
//   full_range  every finite code equally likely: the whole normal range and
//               the subnormals (e4m3: 2^-9 ... 448; e5m2: 2^-16 ... 57344).
// Never NaN, never infinity.
enum class Fp8Spread { moderate, full_range };

PROVISION_HOST_DEVICE inline std::uint8_t random_fp8_code(Fp8Format format, Fp8Spread spread, std::uint64_t bits) {
    const bool e4m3 = format == Fp8Format::e4m3;
    if (spread == Fp8Spread::full_range) {
        if (e4m3) {  // 254 finite codes: all but 0x7F and 0xFF
            const unsigned r = static_cast<unsigned>(bits % 254);
            return static_cast<std::uint8_t>(r < 127 ? r : r + 1);
        }
        const unsigned r = static_cast<unsigned>(bits % 248);  // 124 finite codes of each sign: 0x00 ... 0x7B
        return static_cast<std::uint8_t>((r % 124) | (r >= 124 ? 0x80u : 0u));
    }
    const unsigned mantissa_bits = e4m3 ? 3 : 2;
    const unsigned bias = e4m3 ? 7 : 15;
    const unsigned sign = static_cast<unsigned>(bits & 1) << 7;
    const unsigned mantissa = static_cast<unsigned>(bits >> 9) & ((1u << mantissa_bits) - 1);
    if (((bits >> 1) & 31) == 0)  // a subnormal, never zero
        return static_cast<std::uint8_t>(sign | (mantissa == 0 ? 1u : mantissa));
    const unsigned exponent = bias - 3 + static_cast<unsigned>((bits >> 6) % 7);
    return static_cast<std::uint8_t>(sign | (exponent << mantissa_bits) | mantissa);
}

}  // namespace provision::kernels
