// Reads the GPUs as CUDA programs will see them, through the CUDA driver
// library (libcuda.so.1) loaded with dlopen.  libcuda applies this process's
// CUDA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER) itself, so its list is exactly
// the workload's.
#pragma once

#include <string>
#include <vector>

#include "gpu/inventory.h"

namespace provision {

struct CudaDevice {
    Gpu gpu;                  // index = CUDA ordinal; nvml_index not yet known
    std::string parent_uuid;  // the physical GPU's UUID where it differs (MIG), else empty
};

struct CudaReport {
    bool library_found = false;  // dlopen succeeded
    bool initialised = false;    // cuInit succeeded, or found no device to show
    std::string cuda_version;    // "13.0", from cuDriverGetVersion
    std::vector<CudaDevice> devices;
    std::vector<std::string> notes;
    bool problem = false;        // the library is there but something failed
};

// Never throws: every failure is a note in the report.  Leaves libcuda
// loaded (a CUDA driver is never unloaded once initialised).
CudaReport probe_cuda(const std::string& library);

}  // namespace provision
