// The variables provision hands to the workload: the decision, the
// workload's own knobs, the recipe's settings, the features (TF32, the
// number formats) and the dtype.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/formats.h"
#include "gpu/inventory.h"
#include "core/text.h"  // is_valid_variable_name
#include "recipe/recipe.h"
#include "select/selection.h"

namespace provision {

// A variable the user had already set to another value than the recipes'
// own: the user's value is the one written and handed on.
struct KeptVariable {
    std::string name;
    std::string value;          // the user's
    std::string recipe_value;   // what the recipes would have written
    std::string mechanism;      // set when the variable names the attention backend
};

// Ordered so the env file and the report read the same way every time.
class EnvSettings {
public:
    void set(const std::string& name, const std::string& value);
    std::optional<std::string> get(const std::string& name) const;
    const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

    // Sets `kept.name` to the user's value and remembers why.
    void keep(const KeptVariable& kept);
    const std::vector<KeptVariable>& kept() const { return kept_; }
    bool is_kept(const std::string& name) const;

private:
    std::vector<std::pair<std::string, std::string>> entries_;
    std::unordered_map<std::string, std::size_t> position_;  // name -> index in entries_: linear loading
    std::vector<KeptVariable> kept_;
    std::unordered_map<std::string, std::size_t> kept_position_;
};

// One line for the report: "NAME=value kept from the environment (...)".
std::string describe(const KeptVariable& kept);

class UserValues;

// Variables that carry the decision -- PROVISION_ATTENTION, the PROVISION_*
// variables a workload recipe writes, and the workload's override variables
// (which the decision already read) -- always hold the selected mechanism.
// Every other variable a recipe writes (plain settings, feature switches, a
// workload's own backend variable such as DIFFUSERS_ATTN_BACKEND) follows
// the user's own values (user_values.h).  PROVISION_DTYPE holds the formats
// stage's dtype: the user's own when it was kept, recorded as kept.
EnvSettings build_env_settings(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const Decision& decision, const FormatsDecision& formats, const UserValues& users);

}  // namespace provision
