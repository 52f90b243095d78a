// How the detect stage reads the machine (detect.h): the driver's libraries,
// the workload's GPU variables, the time limit.  A leaf, so the options that
// carry it reach nothing of detection itself.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace provision {

// What becomes of NVML once the GPUs are read: shut down (its descriptors
// closed) beside the rest of the run, as a workload about to be exec'd or
// the next round of --repeat needs, or left for the process's exit to close,
// which saves a run that ends after its report the wait for nvmlShutdown
// (about 5 ms on an H200, the end of a --no-validate start).
enum class NvmlAfterReading { shut_down, left_to_exit };

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

}  // namespace provision
