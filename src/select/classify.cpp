#include "select/classify.h"

namespace provision {

std::string classify_capability(const ComputeCapability& cc, const RecipeSet& recipes) {
    // Exact lists first, so a range never shadows a named capability.
    for (const auto& arch : recipes.architectures)
        for (const auto& known : arch.compute_capabilities)
            if (known == cc) return arch.name;
    for (const auto& arch : recipes.architectures)
        if ((arch.bounds.min || arch.bounds.max) && arch.bounds.contains(cc)) return arch.name;
    return "unknown";
}

void classify_gpus(Inventory& inventory, const RecipeSet& recipes) {
    for (auto& gpu : inventory.gpus) {
        gpu.architecture = classify_capability(gpu.compute_capability, recipes);
        const ArchitectureSpec* spec = recipes.architecture(gpu.architecture);
        gpu.family = spec ? spec->family_name() : gpu.architecture;
    }
}

}  // namespace provision
