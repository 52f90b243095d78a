// Reads the GPUs as CUDA programs will see them, through the CUDA driver
// library (libcuda.so.1) loaded with dlopen.  libcuda applies this process's
// CUDA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER) itself, so its list is exactly
// the workload's.
#pragma once

#include <functional>
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
    bool initialised = false;    // cuInit succeeded, or found no device to show; false when not asked
    std::string cuda_version;    // "13.0", from cuDriverGetVersion
    std::vector<CudaDevice> devices;
    std::vector<std::string> notes;
    bool problem = false;        // the library is there but something failed
};

// Never throws: every failure is a note in the report.  Leaves libcuda
// loaded (a CUDA driver is never unloaded once initialised).
//
// `enumerate` is asked once the library is loaded and its functions found,
// and may wait for the answer: false stops there, before cuInit (the costly
// part, which starts the driver), with a report that says only whether the
// library is usable.
CudaReport probe_cuda(const std::string& library, const std::function<bool()>& enumerate = [] { return true; });

}  // namespace provision
