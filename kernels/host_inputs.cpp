#include "host_inputs.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace provision::kernels {
namespace {

// splitmix64's finaliser, as in random_fill.cu.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

float normal_at(std::uint64_t seed, std::size_t i) {
    const std::uint64_t bits = mix(seed ^ mix(i));
    const float u1 = (static_cast<float>(bits >> 40) + 1.f) * 0x1p-24f;  // (0, 1]
    const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFu) * 0x1p-24f;
    return std::sqrt(-2.f * std::log(u1)) * std::cos(2.f * std::numbers::pi_v<float> * u2);  // Box-Muller
}

}  // namespace

std::vector<float> normal_floats(std::size_t count, std::uint64_t seed) {
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = normal_at(seed, i);
    return values;
}

std::vector<std::uint16_t> normal_bits(ElementType type, std::size_t count, std::uint64_t seed) {
    std::vector<std::uint16_t> bits(count);
    for (std::size_t i = 0; i < count; ++i) bits[i] = float_to_bits(type, normal_at(seed, i));
    return bits;
}

}  // namespace provision::kernels
