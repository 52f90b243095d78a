// Which PyTorch wheels would serve this machine, from the recipes'
// [torch_builds] table: the fix a message names when the installed torch
// cannot use the GPUs or the driver.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gpu/inventory.h"
#include "recipe/recipe.h"

namespace provision {

// The build with the newest CUDA that the driver runs without JIT and whose
// SASS covers every visible GPU; nullptr when none does (or the driver's
// CUDA version is unknown).
const TorchBuildSpec* serving_torch_build(const std::map<std::string, TorchBuildSpec>& builds,
                                          const Inventory& inventory);

// "torch>=2.10 from https://download.pytorch.org/whl/cu128 (CUDA 12.8) runs here"; empty without one.
std::string torch_fix_words(const std::map<std::string, TorchBuildSpec>& builds, const Inventory& inventory);

}  // namespace provision
