// Reads recipe files (TOML) into a RecipeSet.  Later files are merged over
// earlier ones, so a user recipe can add a mechanism, change an order or add
// an env setting without copying the built-in recipes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace provision {

// Files and folders (every *.toml below a folder, in path order), merged in
// the order given.  Throws Error(invalid_input) naming file:line:column.
RecipeSet load_recipes(const std::vector<std::string>& paths);

// The built-in recipes (those compiled in, or `builtin_folder` in their
// place: PROVISION_BUILTIN_RECIPES), then `paths` merged over them.
RecipeSet load_recipes_over_builtins(const std::optional<std::string>& builtin_folder,
                                    const std::vector<std::string>& paths);

}  // namespace provision
