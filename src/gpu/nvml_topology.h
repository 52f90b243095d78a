// Reads how the host's GPUs are joined through NVML: each GPU's NVLink
// links (how many, how many active, the NVLink generation) and its PCIe link
// to the host, and for each pair of GPUs the path between them, named as
// `nvidia-smi topo -m` names it, and whether the driver allows peer access.
//
// A host of one GPU has no pairs: its NVLinks are not read.  Every function
// is optional: an older driver without one, or a GPU that
// answers NVML_ERROR_NOT_SUPPORTED, leaves that fact unknown, never a fault.
// NV<n> counts the active links that join the pair: links whose remote end
// is the other GPU (by PCI address), or, where both GPUs' links lead to
// NVSwitches, the fewer of the two GPUs' active switch links.
#pragma once

#include <vector>

#include "core/shared_library.h"
#include "gpu/nvml_api.h"
#include "gpu/nvml_probe.h"

namespace provision {

// `devices[i]` is the handle of report.gpus[i] (nullptr where that GPU could
// not be read).  Fills each GPU's nvlinks, nvlink_generation and pcie, and
// report.topology.
void read_nvml_topology(const SharedLibrary& library, const std::vector<nvml::Device>& devices, NvmlReport& report,
                        const std::string& pci_devices = "/sys/bus/pci/devices");

// NVML's NVLink version code (nvmlDeviceGetNvLinkVersion) as the NVLink
// generation: 1 for 1.0, 2 for 2.0 and 2.2, 3 for 3.0 and 3.1, 4, 5; 0 for
// a code it does not know.
unsigned nvlink_generation_of(unsigned version_code);

}  // namespace provision
