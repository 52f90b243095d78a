#include "workload_env/user_values.h"

#include <algorithm>

namespace provision {

std::vector<std::pair<std::string, std::string>> written(const std::vector<UserDecision>& decided) {
    std::vector<std::pair<std::string, std::string>> values;
    for (const UserDecision& one : decided)
        if (one.written && !one.kept) values.emplace_back(one.name, one.value);
    return values;
}

std::vector<KeptVariable> kept(const std::vector<UserDecision>& decided) {
    std::vector<KeptVariable> values;
    for (const UserDecision& one : decided)
        if (one.kept) values.push_back(*one.kept);
    return values;
}

std::optional<std::string> UserValues::of(const std::string& name) const {
    const auto it = environment_.find(name);
    if (it == environment_.end()) return std::nullopt;
    return it->second;
}

UserDecision UserValues::decide(const std::string& name, const std::string& value, const std::string& mechanism) const {
    UserDecision decided{name, value, true, std::nullopt};
    if (const auto user = of(name); user && *user != value) {
        decided.written = false;
        decided.kept = KeptVariable{name, *user, value, mechanism};
    }
    return decided;
}

std::vector<UserDecision> UserValues::decide_together(const std::vector<std::pair<std::string, std::string>>& wanted,
                                                      const std::vector<std::string>& decision) const {
    const bool users = std::any_of(decision.begin(), decision.end(), [&](const std::string& name) { return of(name); });
    std::vector<UserDecision> decided;
    for (const auto& [name, value] : wanted) {
        UserDecision one = decide(name, value);
        if (users && !of(name)) one.written = false;  // the user decided with the others
        decided.push_back(std::move(one));
    }
    return decided;
}

void UserValues::apply(const std::vector<UserDecision>& decided, EnvSettings& env) {
    for (const UserDecision& one : decided) {
        if (one.kept) {
            env.keep(*one.kept);
        } else if (one.written) {
            env.set(one.name, one.value);
        }
    }
}

}  // namespace provision
