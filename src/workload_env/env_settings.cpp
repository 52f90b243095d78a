#include "workload_env/env_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "workload_env/user_values.h"
#include "core/text.h"

namespace provision {

void EnvSettings::set(const std::string& name, const std::string& value) {
    if (!is_valid_variable_name(name))
        throw Error(ExitCode::invalid_input, fmt::format("'{}' is not a valid environment variable name",
                                                         echoed(name)));
    const auto [it, added] = position_.emplace(name, entries_.size());
    if (added) entries_.emplace_back(name, value);
    else entries_[it->second].second = value;
}

void EnvSettings::keep(const KeptVariable& kept) {
    set(kept.name, kept.value);
    const auto [it, added] = kept_position_.emplace(kept.name, kept_.size());
    if (added) kept_.push_back(kept);
    else kept_[it->second] = kept;
}

bool EnvSettings::is_kept(const std::string& name) const { return kept_position_.count(name) > 0; }

std::string describe(const KeptVariable& kept) {
    std::string text = fmt::format("{}={} kept from the environment (the recipe's value: {})", kept.name,
                                   echoed(kept.value), echoed(kept.recipe_value));
    if (!kept.mechanism.empty())
        text += fmt::format("; the workload follows it rather than the selected {}", kept.mechanism);
    return text;
}

std::optional<std::string> EnvSettings::get(const std::string& name) const {
    const auto it = position_.find(name);
    if (it == position_.end()) return std::nullopt;
    return entries_[it->second].second;
}

namespace {

// The variables whose value is the decision itself, whatever the user set.
bool carries_decision(const WorkloadSpec& workload, const std::string& name) {
    return name.starts_with("PROVISION_") ||
           std::find(workload.override_variables.begin(), workload.override_variables.end(), name) !=
               workload.override_variables.end();
}

}  // namespace

EnvSettings build_env_settings(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const Decision& decision, const FormatsDecision& formats, const UserValues& users) {
    EnvSettings settings;
    auto put = [&](const std::string& name, const std::string& value, const std::string& mechanism) {
        if (carries_decision(workload, name)) {
            settings.set(name, value);
            return;
        }
        UserValues::apply({users.decide(name, value, mechanism)}, settings);
    };
    for (const auto& [name, value] : workload.env) put(name, value, "");
    if (!inventory.gpus.empty())
        for (const auto& [name, value] : workload.gpu_env) put(name, value, "");
    for (const auto& [name, enabled] : formats.features) {
        const FeatureSpec& feature = recipes.features.at(name);
        for (const auto& [variable, value] : enabled ? feature.env_enabled : feature.env_disabled)
            put(variable, value, "");
    }
    for (const auto& [variable, values] : workload.mechanism_env) {
        auto it = values.find(decision.mechanism);
        if (it == values.end()) it = values.find("*");
        if (it != values.end()) put(variable, it->second, decision.mechanism);
    }
    settings.set("PROVISION_ATTENTION", decision.mechanism);
    const DtypeChoice& dtype = formats.dtype;
    if (dtype.user == DtypeOverride::none || dtype.value == dtype.recommended)
        settings.set("PROVISION_DTYPE", dtype.value);
    else
        settings.keep({"PROVISION_DTYPE", dtype.value, dtype.recommended, ""});
    return settings;
}

}  // namespace provision
