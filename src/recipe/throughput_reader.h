// Reads the [throughput] table of a recipe file (recipe/throughput.h).
#pragma once

#include <functional>
#include <string>

#include <toml++/toml.h>

#include "recipe/throughput.h"

namespace provision {

// Merges `table` over `into`: a model named again keeps what the new table
// leaves out.  `refer_check` is called for every check name, so the loader
// can check that the check exists.  Throws Error(invalid_input) naming
// file:line:column.
void read_throughput(const toml::table& table, const std::string& file, ThroughputTable& into,
                     const std::function<void(const std::string& check, const toml::node& where)>& refer_check);

}  // namespace provision
