// Host-side API of the bundled CUDA validation kernels.  Plain C++ types
// only: nothing outside kernels/ includes a CUDA header.
#pragma once

#include <string>
#include <vector>

namespace provision::kernels {

enum class CheckStatus { passed, failed, unsupported, error };

struct CheckOptions {
    unsigned seed = 0;          // fresh random inputs per run; 0 = pick one
    bool full = false;          // --validate=full: also measure throughput
    std::string fault;          // test-only: "" | "wrong-result" | "hang"
};

struct CheckResult {
    std::string name;           // e.g. "attention.bf16.wgmma"
    CheckStatus status = CheckStatus::error;
    double max_rel_error = 0;   // worst error seen against the reference
    double tolerance = 0;       // the bound it was held to
    double ms = 0;              // kernel time of the check
    double tflops = 0;          // only with CheckOptions::full
    std::string detail;         // CUDA error name and message, or why unsupported
};

// True when the binary carries compiled kernels (built with a CUDA toolkit).
bool kernels_available();

// The GPU targets the kernels carry, in words ("sm_75, sm_80, ..., sm_120 +
// PTX compute_120"); empty when built without CUDA.
std::string kernel_architectures();

struct DeviceInfo {
    int index = 0;              // CUDA index, as this process sees it
    std::string name;
    int major = 0;              // compute capability
    int minor = 0;
};

struct DeviceProbe {
    std::vector<DeviceInfo> devices;
    std::string detail;         // why the list is empty (no toolkit, no device, old driver, ...)
};

// The CUDA devices this process can use.  Never throws.
DeviceProbe probe_devices();

// Every check name the kernels know, in a stable order.
std::vector<std::string> check_names();

// Runs one check on one CUDA device (index in CUDA's visible order).
// Never throws for CUDA failures: they come back as CheckStatus::error with
// the error's name in detail.
CheckResult run_check(int cuda_device, const std::string& name, const CheckOptions& options);

}  // namespace provision::kernels
