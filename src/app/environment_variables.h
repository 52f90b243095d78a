// Every environment variable provision reads, in one table: `--help` lists
// them from it, and tests check it against the README's tables and against
// the names the sources read, so a variable cannot be added silently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace provision {

struct EnvironmentVariable {
    std::string_view name;     // "PROVISION_WORKLOAD"
    std::string_view option;   // the flag it stands in for ("--workload"); empty when none
    std::string_view meaning;  // one line for --help
};

const std::vector<EnvironmentVariable>& environment_variables();

// The --help section: "Environment variables:" and one line each.
std::string environment_help();

}  // namespace provision
