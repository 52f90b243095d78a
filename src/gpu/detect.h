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

#include "gpu/detect_options.h"
#include "gpu/inventory.h"
#include "gpu/nvml_probe.h"

namespace provision {

// The real machine.  NVML answers first; libcuda is loaded beside it but
// starts (cuInit) only where NVML cannot stand in for it (nvml_stand_in.h),
// or where NVML is slow to answer.
Inventory detect_gpus(const DetectOptions& options);

// A simulated machine (gpu_fixture.h describes the file).
Inventory load_gpu_fixture(const std::string& path, const std::optional<std::string>& cuda_visible_devices);

}  // namespace provision
