// When NVML's answer can stand in for libcuda's, so that provision need not
// start the CUDA driver at all: cuInit costs about 100 ms on an H100, and the
// validation worker pays it again in its own process.
//
// NVML lists every GPU in PCI bus order with its name, UUID, memory and
// compute capability; libcuda lists the GPUs of CUDA_VISIBLE_DEVICES in
// CUDA's order (CUDA_DEVICE_ORDER, FASTEST_FIRST by default: the fastest
// GPU first, ties in PCI bus order).  The two lists agree, once provision
// applies CUDA_VISIBLE_DEVICES itself, when
//  - NVML answered everything (every GPU read, the compute capabilities and
//    the driver's CUDA version, which older drivers' NVML cannot report),
//  - no GPU is in MIG mode and CUDA_VISIBLE_DEVICES names no MIG instance
//    (libcuda lists MIG instances, NVML their parent GPUs), and
//  - CUDA's order cannot differ from NVML's where it matters: one GPU, GPUs
//    of one model, CUDA_DEVICE_ORDER=PCI_BUS_ID, or a CUDA_VISIBLE_DEVICES
//    that names GPUs by UUID only (the workload's order is then the list's).
#pragma once

#include <optional>
#include <string>

#include "gpu/nvml_probe.h"

namespace provision {

// Why libcuda must enumerate the GPUs, or std::nullopt when NVML's report
// is already the workload's view.
std::optional<std::string> why_libcuda_is_needed(const NvmlReport& nvml, const CudaEnvironment& cuda);

}  // namespace provision
