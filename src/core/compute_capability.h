// A GPU generation's compute capability (9.0 for Hopper): what the detect
// stage reads from the driver, the recipes' capability ranges are written
// in, and the native readers compare the SASS and PTX a package ships with.
#pragma once

#include <compare>
#include <optional>
#include <string>

namespace provision {

struct ComputeCapability {
    int major = 0;
    int minor = 0;

    // "9.0" -> {9, 0}; std::nullopt when the text is not MAJOR.MINOR.
    static std::optional<ComputeCapability> parse(const std::string& text);
    std::string str() const;
    auto operator<=>(const ComputeCapability&) const = default;
};

}  // namespace provision
