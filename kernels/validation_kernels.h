// Host-side API of the bundled CUDA validation kernels.  Plain C++ types
// only: nothing outside kernels/ includes a CUDA header.
#pragma once

#include <memory>
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

// What opening a device for the checks found.  Opening creates the
// device's CUDA context: most of what a worker's start costs.
struct OpenedDevice {
    bool ok = false;
    int major = 0;              // compute capability
    int minor = 0;
    std::string uuid;           // "GPU-8932f937-..." as NVML and nvidia-smi write it
    std::string pci_bus_id;     // "0000:1b:00.0", as sysfs names the device
    std::string detail;         // the CUDA error when not ok
    // Not ok because the GPU has no room for one more context: out of memory,
    // or its compute mode lets no further process in.  Whether that is
    // another process's doing the parent tells from NVML.
    bool full = false;
};

// Makes `cuda_device` current in this thread and creates its context.
// Never throws.
OpenedDevice open_device(int cuda_device);

// One check in two halves.  prepare_check does the host half at once: the
// random inputs from the seed and the fp64 references on the CPU, without a
// single CUDA call, so it can run on any thread while the device is still
// being opened.  run() is the device half: upload, launch, download, judge.
class PreparedCheck {
public:
    virtual ~PreparedCheck() = default;
    // Never throws for CUDA failures (CheckStatus::error with the error's
    // name in detail).  Called once.
    virtual CheckResult run(int cuda_device) = 0;
};

// Never throws: an unknown name gives a check whose run() reports the error.
std::unique_ptr<PreparedCheck> prepare_check(const std::string& name, const CheckOptions& options);

// Both halves, one after the other, on one CUDA device (index in CUDA's
// visible order).
CheckResult run_check(int cuda_device, const std::string& name, const CheckOptions& options);

}  // namespace provision::kernels
