// Hands the process over to the workload with exec: same PID, so the
// workload's exit status is the container's.
#pragma once

#include <string>
#include <vector>

#include "workload_env/env_settings.h"
#include "recipe/recipe.h"

namespace provision {

// The flags the workload recipe adds for `mechanism`, minus any the user
// already gave as "--flag" or "--flag=value" (a recipe flag's own values go
// with it), and none at all when the user gave a conflicting flag; then the
// flags that carry `dtype` (its dtype_arguments), minus those the user gave.
std::vector<std::string> workload_arguments(const WorkloadSpec& workload, const std::string& mechanism,
                                            const std::string& dtype, const std::vector<std::string>& command);

// Puts `settings` into the environment and execs `command`, looked up in
// `search_path` (the PATH provision was given, unless `settings` set one).
// Returns only on failure, by throwing Error(command_not_found) or
// Error(cannot_execute).
[[noreturn]] void exec_workload(const std::vector<std::string>& command, const EnvSettings& settings,
                                std::string search_path);

}  // namespace provision
