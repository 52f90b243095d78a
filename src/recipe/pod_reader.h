// Reads the [pod] table of a recipe file (recipe/pod_recipe.h), and the
// p2p_settings table a workload recipe may carry.
#pragma once

#include <functional>
#include <string>

#include <toml++/toml.h>

#include "recipe/pod_recipe.h"

namespace provision {

// Merges `table` over `into`: a figure for a generation already there
// replaces it, a known-broken rule is added.  `refer_architecture` is called
// for every architecture named, so the loader can check it exists.  Throws
// Error(invalid_input) naming file:line:column.
void read_pod(const toml::table& table, const std::string& file, PodRecipe& into,
              const std::function<void(const std::string& architecture, const toml::node& where)>& refer_architecture);

// { description = "...", env_pcie_broken = { NAME = "value" }, env_broken = {...} }
// merged over `into`; `where` names the table in messages.
void read_peer_access_settings(const toml::table& table, const std::string& file, const std::string& where,
                               PeerAccessSettings& into);

}  // namespace provision
