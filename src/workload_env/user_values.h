// The one rule for the values the user set themselves: a variable provision
// would write that the user already set keeps the user's value, which is
// the one written and handed on (so the env file always tells what the
// workload gets), and the report says so (KeptVariable).  Several variables
// that make one decision (NCCL's peer-access settings: NCCL_P2P_DISABLE and
// NCCL_P2P_LEVEL) are the user's as a whole once any of them is set.  The
// variables that carry provision's own decision (the selected mechanism)
// are not subject to it: they are written as decided.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload_env/env_settings.h"

namespace provision {

// What becomes of one variable provision would write.
struct UserDecision {
    std::string name;
    std::string value;                 // provision's
    bool written = true;               // provision's value is written (the user set none, or the same)
    std::optional<KeptVariable> kept;  // the user's own value, which stays
};

// Those of `decided` that are written, as NAME=value; those the user keeps.
std::vector<std::pair<std::string, std::string>> written(const std::vector<UserDecision>& decided);
std::vector<KeptVariable> kept(const std::vector<UserDecision>& decided);

class UserValues {
public:
    // `environment`: the process environment the workload inherits.
    explicit UserValues(std::map<std::string, std::string> environment) : environment_(std::move(environment)) {}

    // The user's value of `name`, if they set it.
    std::optional<std::string> of(const std::string& name) const;

    // `name`=`value` as provision would write it; `mechanism` names the
    // selected mechanism where the variable names the attention backend.
    UserDecision decide(const std::string& name, const std::string& value, const std::string& mechanism = "") const;

    // `wanted`, part of one decision made of the variables `decision`: all
    // written where the user set none of `decision`, else each only where
    // the user's value is provision's already (the others kept).
    std::vector<UserDecision> decide_together(const std::vector<std::pair<std::string, std::string>>& wanted,
                                              const std::vector<std::string>& decision) const;

    // Puts `decided` into `env`: written, or kept as the user's.
    static void apply(const std::vector<UserDecision>& decided, EnvSettings& env);

private:
    std::map<std::string, std::string> environment_;
};

}  // namespace provision
