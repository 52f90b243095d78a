#include "native/driver_compat.h"

#include <charconv>

#include <fmt/format.h>

namespace provision::native {

namespace {

bool parse_number(std::string_view text, int& out) {
    if (text.empty() || text.size() > 4) return false;
    for (const char c : text)
        if (c < '0' || c > '9') return false;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::optional<CudaVersion> CudaVersion::parse(std::string_view text) {
    const std::size_t dot = text.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    std::string_view minor = text.substr(dot + 1);
    if (const std::size_t patch = minor.find('.'); patch != std::string_view::npos) {
        int ignored = 0;
        if (!parse_number(minor.substr(patch + 1), ignored)) return std::nullopt;
        minor = minor.substr(0, patch);
    }
    CudaVersion version;
    if (!parse_number(text.substr(0, dot), version.major) || !parse_number(minor, version.minor)) return std::nullopt;
    return version;
}

std::string CudaVersion::str() const { return fmt::format("{}.{}", major, minor); }

const std::vector<DriverMinimum>& builtin_driver_minimums() {
    static const std::vector<DriverMinimum> table{{11, "450.80.02"}, {12, "525.60.13"}, {13, "580.65.06"}};
    return table;
}

std::string_view to_string(DriverVerdict verdict) {
    switch (verdict) {
        case DriverVerdict::runs: return "runs";
        case DriverVerdict::runs_minor_compat: return "runs-minor-compat";
        case DriverVerdict::driver_too_old: return "driver-too-old";
    }
    return "driver-too-old";
}

DriverCompat check_driver(CudaVersion built_with, CudaVersion driver_cuda, bool needs_ptx_jit,
                          const std::vector<DriverMinimum>& minimums) {
    DriverCompat result;
    if (built_with <= driver_cuda) return result;  // backward compatibility: newer drivers run older builds
    if (built_with.major == driver_cuda.major && !needs_ptx_jit) {
        result.verdict = DriverVerdict::runs_minor_compat;
        return result;
    }
    result.verdict = DriverVerdict::driver_too_old;
    result.cuda_needed = built_with;
    if (built_with.major > driver_cuda.major)
        for (const DriverMinimum& minimum : minimums)
            if (minimum.cuda_major == built_with.major) result.driver_needed = minimum.driver;
    return result;
}

}  // namespace provision::native
