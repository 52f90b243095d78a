// Whether the NVIDIA driver can run code built with a given CUDA version
// (rules: NVIDIA's "CUDA Compatibility" guide, section "Minor Version
// Compatibility").
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace provision::native {

struct CudaVersion {
    int major = 0;
    int minor = 0;

    // "13.0", "12.8", "12.8.1" (the patch is ignored); nullopt otherwise.
    static std::optional<CudaVersion> parse(std::string_view text);
    std::string str() const;  // "13.0"
    auto operator<=>(const CudaVersion&) const = default;
};

// The oldest driver that runs anything built with a CUDA major release.
struct DriverMinimum {
    int cuda_major = 0;
    std::string driver;  // "580.65.06"
};

// CUDA 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.65.06.  Sources:
// NVIDIA, "CUDA Compatibility", Minor Version Compatibility, table 1 (11.x
// >= 450, 12.x >= 525, 13.x >= 580; 450.80.02 named in its note), and the
// CUDA Toolkit release notes, table "CUDA Toolkit and Minimum Required Driver
// Version for CUDA Minor Version Compatibility" (525.60.13 for 12.x; 580.65.06
// for 13.0 GA).
const std::vector<DriverMinimum>& builtin_driver_minimums();

enum class DriverVerdict {
    runs,                 // the driver's CUDA is the build's or newer
    runs_minor_compat,    // same major, older minor: runs without PTX JIT or newer driver APIs
    driver_too_old,       // a newer major, or an older minor where code must be JIT-compiled
};

std::string_view to_string(DriverVerdict verdict);  // "runs", "runs-minor-compat", "driver-too-old"

struct DriverCompat {
    DriverVerdict verdict = DriverVerdict::runs;
    // For driver_too_old: the CUDA version the driver must report, and the
    // oldest driver of that major release when the table knows it ("580.65.06").
    // A minor-version gap that needs JIT asks for the driver of that toolkit
    // release, which the table does not hold: `driver_needed` is then empty.
    std::optional<CudaVersion> cuda_needed;
    std::optional<std::string> driver_needed;
};

// `built_with`: the CUDA a package was built with (torch/version.py's cuda);
// `driver_cuda`: what the driver supports (NVML's CUDA driver version,
// "13.0"); `needs_ptx_jit`: whether the GPU runs the package only through PTX
// (a driver cannot JIT PTX from a newer toolkit).
DriverCompat check_driver(CudaVersion built_with, CudaVersion driver_cuda, bool needs_ptx_jit,
                          const std::vector<DriverMinimum>& minimums = builtin_driver_minimums());

}  // namespace provision::native
