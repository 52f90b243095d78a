// The files of the torch the workload will import, read without starting
// Python: its build (torch/version.py) and the device code of
// torch/lib/libtorch_cuda.so (fatbinary headers only).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "native/fatbin.h"
#include "native/torch_build.h"

namespace provision {

struct TorchFiles {
    std::string folder;  // ".../site-packages/torch"
    native::TorchBuild build;
    std::string library;                                // libtorch_cuda.so's path, when it is there
    std::optional<native::FatbinSummary> device_code;  // its fatbinary; nothing when absent or unreadable
    std::vector<std::string> notes;                     // files that could not be read, and why
};

// Torch from the first folder (in import order) that holds torch/version.py;
// nothing when none does (no torch, or a simulated tree of dist-info alone:
// missing evidence is not a finding).
std::optional<TorchFiles> read_torch_files(const std::vector<std::string>& site_packages);

}  // namespace provision
