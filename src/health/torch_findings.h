// Whether the installed torch can use the visible GPUs with this driver,
// judged from its files (native/torch_files.h): a CPU-only or ROCm build on
// an NVIDIA machine, a CUDA newer than the driver runs, a GPU the device code
// carries nothing for, or only PTX to JIT-compile.  Levels come from the
// recipes' [policy] (torch_cpu_build, driver_too_old, no_kernel_image,
// ptx_jit_only); for torch itself the built-in levels fail the run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "health/findings.h"
#include "native/kernel_support.h"
#include "native/torch_files.h"
#include "recipe/recipe.h"

namespace provision {

struct NativeGpuVerdict {
    int gpu = 0;  // as the workload sees it
    native::KernelSupport runs = native::KernelSupport::no;
};

// One entry of the report's "native" list.
struct NativePackageReport {
    std::string package;               // "torch"
    std::string version;               // "2.11.0+cu130"
    std::string cuda;                  // "13.0"; empty for CPU and ROCm builds
    std::vector<std::string> sass;     // capabilities the bulk of the device code carries: "7.5", "9.0a"
    std::vector<std::string> ptx;
    std::vector<NativeGpuVerdict> gpus;
    std::vector<std::string> details;  // for --explain: the library read and its units per target
    bool verified = true;              // false: its compiled files could not be read; nothing was judged
};

struct TorchJudgement {
    NativePackageReport package;
    std::vector<Finding> findings;
};

// `builds`: the recipes' [torch_builds], for the fix a refusal names.
TorchJudgement judge_torch(const TorchFiles& files, const Inventory& inventory, const HealthPolicy& policy,
                           const std::map<std::string, TorchBuildSpec>& builds = {});

}  // namespace provision
