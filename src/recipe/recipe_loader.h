// Reads recipe files (TOML) into a RecipeSet.  Later files are merged over
// earlier ones, so a user recipe can add a mechanism, change an order or add
// an env setting without copying the built-in recipes.
#pragma once

#include <string>
#include <vector>

#include "recipe/recipe.h"

namespace provision {

// Files and folders (every *.toml below a folder, in path order), merged in
// the order given.  Throws Error(invalid_input) naming file:line:column.
RecipeSet load_recipes(const std::vector<std::string>& paths);

// The built-in recipe folder: $PROVISION_BUILTIN_RECIPES, else
// <exe>/recipes (build tree), else <exe>/../share/provision/recipes.
// Throws Error(invalid_input) when none exists.
std::string builtin_recipe_dir();

}  // namespace provision
