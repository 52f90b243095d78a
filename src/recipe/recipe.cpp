#include "recipe/recipe.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text.h"

namespace provision {

bool CapabilityBounds::contains(const ComputeCapability& cc) const {
    if (min && cc < *min) return false;
    if (max && *max < cc) return false;
    return true;
}

std::string CapabilityBounds::str() const {
    if (min && max) {
        if (*min == *max) return fmt::format("compute capability {}", min->str());
        return fmt::format("compute capability {} to {}", min->str(), max->str());
    }
    if (min) return fmt::format("compute capability {} or newer", min->str());
    if (max) return fmt::format("compute capability {} or older", max->str());
    return "any compute capability";
}

bool ArchitectureSpec::matches(const ComputeCapability& cc) const {
    if (std::find(compute_capabilities.begin(), compute_capabilities.end(), cc) != compute_capabilities.end())
        return true;
    return (bounds.min || bounds.max) && bounds.contains(cc);
}

const ArchitectureSpec* RecipeSet::architecture(const std::string& name) const {
    for (const auto& arch : architectures)
        if (arch.name == name) return &arch;
    return nullptr;
}

std::vector<std::string> RecipeSet::family_names() const {
    std::vector<std::string> names;
    for (const auto& arch : architectures) names.push_back(arch.family_name());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::optional<std::string> RecipeSet::canonical_mechanism(const std::string& name) const {
    const std::string wanted = lowercase(name);
    for (const auto& [canonical, spec] : mechanisms) {
        if (lowercase(canonical) == wanted) return canonical;
        for (const auto& alias : spec.aliases)
            if (lowercase(alias) == wanted) return canonical;
    }
    return std::nullopt;
}

std::vector<std::string> RecipeSet::mechanism_names() const {
    std::vector<std::string> names;
    for (const auto& [name, spec] : mechanisms) names.push_back(name);
    return names;
}

MechanismSpec RecipeSet::mechanism_for(const WorkloadSpec& workload, const std::string& name) const {
    MechanismSpec spec = mechanisms.at(name);
    const auto it = workload.mechanism_requirements.find(name);
    if (it == workload.mechanism_requirements.end()) return spec;
    const MechanismRequirements& needs = it->second;
    // The mechanism's assumed ceiling is about its own packages' builds: a
    // workload that names other packages (vLLM's bundled FlashAttention) or
    // its own ceiling replaces it.
    if (needs.packages || needs.max_compute_capability) spec.assumed_max_compute_capability.reset();
    if (needs.packages) spec.packages = *needs.packages;
    if (needs.min_compute_capability) spec.compute_capability.min = needs.min_compute_capability;
    if (needs.max_compute_capability) spec.compute_capability.max = needs.max_compute_capability;
    spec.requires_gpu = spec.compute_capability.min.has_value() || spec.compute_capability.max.has_value();
    return spec;
}

HealthLevel HealthPolicy::level(const std::string& key) const {
    const auto it = levels.find(key);
    return it == levels.end() ? HealthLevel::degraded : it->second;
}

std::vector<PackageAlternatives> MechanismSpec::packages_on(const std::vector<std::string>& architectures) const {
    std::vector<PackageAlternatives> all = packages;
    std::vector<std::string> seen;
    for (const auto& architecture : architectures) {
        if (std::find(seen.begin(), seen.end(), architecture) != seen.end()) continue;
        seen.push_back(architecture);
        const auto it = packages_for.find(architecture);
        if (it != packages_for.end()) all.insert(all.end(), it->second.begin(), it->second.end());
    }
    return all;
}

std::vector<PackageAlternatives> FeatureSpec::package_gates_on(const std::vector<std::string>& architectures) const {
    std::vector<PackageAlternatives> all = package_gates;
    std::vector<std::string> seen;
    for (const auto& architecture : architectures) {
        if (std::find(seen.begin(), seen.end(), architecture) != seen.end()) continue;
        seen.push_back(architecture);
        const auto it = package_gates_for.find(architecture);
        if (it != package_gates_for.end()) all.insert(all.end(), it->second.begin(), it->second.end());
    }
    return all;
}

std::vector<std::string> RecipeSet::dtype_names() const {
    std::vector<std::string> names{"float32"};
    for (const auto& [name, feature] : features)
        if (!feature.dtype.empty() && std::find(names.begin(), names.end(), feature.dtype) == names.end())
            names.push_back(feature.dtype);
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace provision
