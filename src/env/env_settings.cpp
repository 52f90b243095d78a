#include "env/env_settings.h"

#include <fmt/format.h>

#include "core/error.h"

namespace provision {

void EnvSettings::set(const std::string& name, const std::string& value) {
    if (!is_valid_variable_name(name))
        throw Error(ExitCode::invalid_input, fmt::format("'{}' is not a valid environment variable name", name));
    for (auto& entry : entries_) {
        if (entry.first == name) {
            entry.second = value;
            return;
        }
    }
    entries_.emplace_back(name, value);
}

std::optional<std::string> EnvSettings::get(const std::string& name) const {
    for (const auto& [key, value] : entries_)
        if (key == name) return value;
    return std::nullopt;
}

bool is_valid_variable_name(const std::string& name) {
    if (name.empty()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0)) return false;
    }
    return true;
}

std::map<std::string, bool> feature_states(const Inventory& inventory, const RecipeSet& recipes,
                                           const CheckVerdicts& checks) {
    std::map<std::string, bool> states;
    for (const auto& [name, feature] : recipes.features) {
        bool enabled = !inventory.gpus.empty();
        for (const auto& gpu : inventory.gpus) {
            if (!feature.compute_capability.contains(gpu.compute_capability)) enabled = false;
            for (const auto& check : feature.checks) {
                const auto it = checks.find({gpu.index, check});
                if (it != checks.end() && it->second.state == CheckState::failed) enabled = false;
            }
        }
        states[name] = enabled;
    }
    return states;
}

EnvSettings build_env_settings(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const Decision& decision, const std::map<std::string, bool>& features,
                               const std::map<std::string, std::string>& environment) {
    EnvSettings settings;
    // A plain recipe setting yields to the user's own value, and says so by
    // writing that value, so the file always tells what the workload gets.
    auto set_default = [&](const std::string& name, const std::string& value) {
        const auto it = environment.find(name);
        settings.set(name, it != environment.end() ? it->second : value);
    };
    for (const auto& [name, value] : workload.env) set_default(name, value);
    if (!inventory.gpus.empty())
        for (const auto& [name, value] : workload.gpu_env) set_default(name, value);
    for (const auto& [name, enabled] : features) {
        const FeatureSpec& feature = recipes.features.at(name);
        for (const auto& [variable, value] : enabled ? feature.env_enabled : feature.env_disabled)
            set_default(variable, value);
    }
    // The decision itself always wins: it already honoured the overrides.
    for (const auto& [variable, values] : workload.mechanism_env) {
        auto it = values.find(decision.mechanism);
        if (it == values.end()) it = values.find("*");
        if (it != values.end()) settings.set(variable, it->second);
    }
    settings.set("PROVISION_ATTENTION", decision.mechanism);
    return settings;
}

}  // namespace provision
