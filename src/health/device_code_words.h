// How the report words what a package's device code carries, the GPU it is
// judged for, and the driver it needs: shared by the torch, extension and
// runtime-wheel judgements.
#pragma once

#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "native/driver_compat.h"
#include "native/fatbin.h"

namespace provision {

// "9.0a", "12.0": the capabilities of `targets`, as the report lists them.
std::vector<std::string> capability_list(const std::vector<native::Target>& targets);

// "SASS for 8.0 8.6 9.0 and no PTX".
std::string carried_words(const std::vector<std::string>& sass, const std::vector<std::string>& ptx);

// For --explain: one line per target with the units carrying it
// ("  sm_90: 444 units"), after `heading`.
std::vector<std::string> unit_lines(const std::string& heading, const native::FatbinSummary& code);

// "GPU 0 (NVIDIA H100 80GB HBM3, compute capability 9.0)".
std::string gpu_with_capability(const Gpu& gpu);

// For a driver too old: "a driver for CUDA 13.0 (580.65.06 or newer)".
std::string needed_driver_words(const native::DriverCompat& compat);

// "1 unit", "444 units".
std::string count_words(std::size_t count, const char* one, const char* many);

}  // namespace provision
