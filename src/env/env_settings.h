// The variables provision hands to the workload: the decision, the
// workload's own knobs, the recipe's settings and the features (TF32).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "recipe/recipe.h"
#include "select/selection.h"

namespace provision {

// Ordered so the env file and the report read the same way every time.
class EnvSettings {
public:
    void set(const std::string& name, const std::string& value);
    std::optional<std::string> get(const std::string& name) const;
    const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

private:
    std::vector<std::pair<std::string, std::string>> entries_;
};

// Whether each feature of the recipes is on: every visible GPU is in its
// range and none of its checks failed.
std::map<std::string, bool> feature_states(const Inventory& inventory, const RecipeSet& recipes,
                                           const CheckVerdicts& checks);

// `environment` is the current process environment: a recipe's plain
// settings never replace what the user already set there.
EnvSettings build_env_settings(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const Decision& decision, const std::map<std::string, bool>& features,
                               const std::map<std::string, std::string>& environment);

// [A-Za-z_][A-Za-z0-9_]*
bool is_valid_variable_name(const std::string& name);

}  // namespace provision
