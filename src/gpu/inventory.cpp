#include "gpu/inventory.h"

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

bool GpuHealth::any() const {
    return uncorrected_ecc_errors || retired_pages_pending || row_remap_pending || row_remap_failure ||
           thermal_slowdown || power_brake_slowdown || hw_slowdown || memory_used_mib || other_processes || mig_mode;
}

const char* driver_fault_key(DriverFaultKind kind) {
    switch (kind) {
        case DriverFaultKind::nvml_missing: return "nvml_missing";
        case DriverFaultKind::nvml_too_old: return "nvml_too_old";
        case DriverFaultKind::driver_not_loaded: return "driver_not_loaded";
        case DriverFaultKind::version_mismatch: return "version_mismatch";
        case DriverFaultKind::nvml_init_failed: return "nvml_init_failed";
        case DriverFaultKind::nvml_hang: return "nvml_hang";
        case DriverFaultKind::gpu_lost: return "gpu_lost";
        case DriverFaultKind::gpu_unreadable: return "gpu_unreadable";
    }
    return "unknown";
}

}  // namespace provision
