// Shared by the GPU tests: the device to test on (or the reason there is
// none), and which checks that device should support.
#pragma once

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <optional>
#include <string>

#include "validation_kernels.h"

namespace provision::gpu_tests {

// The first CUDA device; without one, prints why the test is skipped.
inline std::optional<kernels::DeviceInfo> device_or_skip() {
    static const kernels::DeviceProbe probe = kernels::probe_devices();
    if (probe.devices.empty()) {
        WARN(fmt::format("skipped: no GPU to test on ({})", probe.detail));
        return std::nullopt;
    }
    return probe.devices.front();
}

inline int capability(const kernels::DeviceInfo& device) { return device.major * 10 + device.minor; }

// What the hardware offers; the .wgmma checks also need a build that has the
// Hopper kernels, which the tests accept either way.
inline bool hardware_supports(const kernels::DeviceInfo& device, const std::string& check) {
    const int cc = capability(device);
    if (check == "attention.fp16") return cc >= 75;
    if (check == "attention.bf16.wgmma" || check == "gemm.fp8.wgmma") return cc == 90;
    if (check == "gemm.fp8") return cc >= 89;
    return cc >= 80;  // attention.bf16, gemm.tf32
}

inline const char* status_name(kernels::CheckStatus status) {
    switch (status) {
        case kernels::CheckStatus::passed: return "passed";
        case kernels::CheckStatus::failed: return "failed";
        case kernels::CheckStatus::unsupported: return "unsupported";
        case kernels::CheckStatus::error: return "error";
    }
    return "?";
}

// One row of the table scripts/gpu-test collects.
inline void print_row(const char* what, const kernels::DeviceInfo& device, const kernels::CheckResult& result) {
    fmt::print("| {} | {} (sm_{}{}) | {} | {} | {:.3e} | {:.3e} | {:.3f} | {:.1f} | {} |\n", what, device.name,
               device.major, device.minor, result.name, status_name(result.status), result.max_rel_error,
               result.tolerance, result.ms, result.tflops, result.detail);
    std::fflush(stdout);
}

}  // namespace provision::gpu_tests
