// The health stage: weighs what detection found (health signals read on
// each GPU, driver faults) against the recipes' [policy], so that a pod on a
// GPU that should not be trusted stops with words its user understands, and
// one that can still serve proceeds, marked degraded.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "gpu/inventory.h"
#include "recipe/recipe.h"

namespace provision {

struct Finding {
    int gpu = -1;         // the GPU's index as the workload sees it; -1: the driver, or a GPU it cannot see
    int nvml_index = -1;  // NVML's index of the GPU concerned, -1 when none or unknown
    std::string signal;   // the [policy] key (recipe/health_signals.h)
    HealthLevel level = HealthLevel::ok;
    std::string words;    // what happened and what it means, for a pod user
};

// Every signal that fired and every driver fault, each with its level from
// the policy; empty for a healthy machine.
std::vector<Finding> evaluate_health(const Inventory& inventory, const HealthPolicy& policy);

// The worst level among the findings; ok when there are none.
HealthLevel worst_level(const std::vector<Finding>& findings);

}  // namespace provision
