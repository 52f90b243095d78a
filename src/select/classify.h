// Compute capability -> architecture family, from the recipes' table.
#pragma once

#include <string>

#include "gpu/inventory.h"
#include "recipe/recipe.h"

namespace provision {

// "unknown" when no architecture in the recipes names the capability.
std::string classify_capability(const ComputeCapability& cc, const RecipeSet& recipes);

// Fills Gpu::architecture and Gpu::family for every GPU ("unknown" both
// where no architecture names the capability).
void classify_gpus(Inventory& inventory, const RecipeSet& recipes);

}  // namespace provision
