// The "will the compiled code run here" stage: reads the files of torch and
// of the extensions the workload's candidate mechanisms need, judges them
// against the GPUs and the driver (health/torch_findings.h,
// health/extension_findings.h), and marks an extension that cannot run as
// unusable, so that selection rejects its mechanisms and falls back.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "health/findings.h"
#include "health/torch_findings.h"
#include "native/torch_files.h"
#include "packages/python_packages.h"
#include "recipe/recipe.h"

namespace provision {

struct CompiledCode {
    std::vector<NativePackageReport> packages;  // torch first, then the extensions judged
    std::vector<Finding> findings;
};

// Normalised package name -> the mechanisms that need it.
using PackageNeeds = std::map<std::string, std::vector<std::string>>;

// Adds every package of `alternatives` to `needs`, for `mechanism` (once each).
void add_package_needs(PackageNeeds& needs, const std::vector<PackageAlternatives>& alternatives,
                       const std::string& mechanism);

// `torch`: torch's files as read_torch_files found them (read before the
// GPUs are known, beside detection); `override_mechanism`: the mechanism
// the user asked for, judged too.
CompiledCode judge_compiled_code(const RecipeSet& recipes, const WorkloadSpec& workload, const Inventory& inventory,
                                 const std::optional<TorchFiles>& torch,
                                 const std::optional<std::string>& override_mechanism, PackageIndex& packages);

// The cuDNN the workload's torch loads (a CUDA build's only): a copy in
// torch/lib named with its version, else the nvidia-cudnn wheel torch
// depends on (its dist-info's version), else a library named with its
// version in the loader's folders (`ld_library_path`, the *.conf files of
// `ld_so_conf_dir`, the system's defaults).  Nothing when none tells.
std::optional<CudnnInstall> find_torch_cudnn(const std::optional<TorchFiles>& torch, const PackageIndex& packages,
                                             const std::string& ld_library_path, const std::string& ld_so_conf_dir);

struct CompatJudgement {
    std::vector<Finding> findings;
    std::vector<std::string> notes;  // configuration files that could not be read
};

// CUDA forward-compatibility libraries on the workload's library path
// (`ld_library_path`, the *.conf files of `ld_so_conf_dir`) whose libcuda is
// not the driver's own: a cuda_compat_libs finding each.
CompatJudgement judge_compat_libraries(const std::string& ld_library_path, const std::string& ld_so_conf_dir,
                                       const Inventory& inventory, const HealthPolicy& policy);

}  // namespace provision
