#include "core/compute_capability.h"

#include <string_view>

#include <fmt/format.h>

namespace provision {

namespace {

// One to three decimal digits, nothing else: no sign, no space, no "9.0a".
std::optional<int> small_number(std::string_view digits) {
    if (digits.empty() || digits.size() > 3) return std::nullopt;
    int value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    return value;
}

}  // namespace

std::optional<ComputeCapability> ComputeCapability::parse(const std::string& text) {
    const auto dot = text.find('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string_view whole(text);
    const auto major = small_number(whole.substr(0, dot));
    const auto minor = small_number(whole.substr(dot + 1));
    if (!major || !minor) return std::nullopt;
    return ComputeCapability{*major, *minor};
}

std::string ComputeCapability::str() const { return fmt::format("{}.{}", major, minor); }

}  // namespace provision
