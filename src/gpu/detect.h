// The detect stage: what GPUs and driver the workload will see, from the
// real machine (NVML and libcuda, loaded with dlopen) or from a simulated
// machine (a GPU fixture file).
//
// Errors and notes:
//  - A malformed fixture is an error: Error(ExitCode::invalid_input) naming
//    file:line:column.
//  - Everything the real machine does is a note in Inventory::notes, never an
//    error, so a container always starts: no NVIDIA library is a CPU-only
//    machine; a library that loads but fails (driver not loaded, version
//    mismatch, missing function, lost GPU, a call that does not return within
//    the time limit) leaves out what it could not read, says why in words a
//    pod user can act on, and sets Inventory::driver_problem.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "gpu/inventory.h"
#include "gpu/nvml_probe.h"

namespace provision {

struct DetectOptions {
    std::string nvml_library = "libnvidia-ml.so.1";
    std::string cuda_library = "libcuda.so.1";
    // The workload's CUDA_VISIBLE_DEVICES.  libcuda reads this process's
    // environment itself and its list is used whenever it starts; this value
    // is applied by provision only where libcuda cannot enumerate the GPUs.
    std::optional<std::string> cuda_visible_devices;
    // The workload's CUDA_DEVICE_ORDER: "PCI_BUS_ID" makes CUDA's order NVML's.
    std::optional<std::string> cuda_device_order;
    // NVML and libcuda run on worker threads; what has not answered by then
    // is given up (a hung driver must not hang the container's start).
    std::chrono::milliseconds time_limit{20000};
    NvmlAfterReading nvml_after_reading = NvmlAfterReading::shut_down;
    std::string sysfs = "/sys";  // where the GPUs' PCIe links are read (sysfs)
    std::string kernel_log = "/dev/kmsg";  // where each GPU's Xid events are read (xid_log.h)
};

// The real machine.  NVML answers first; libcuda is loaded beside it but
// starts (cuInit) only where NVML cannot stand in for it (nvml_stand_in.h),
// or where NVML is slow to answer.
Inventory detect_gpus(const DetectOptions& options);

// A simulated machine (gpu_fixture.h describes the file).
Inventory load_gpu_fixture(const std::string& path, const std::optional<std::string>& cuda_visible_devices);

}  // namespace provision
