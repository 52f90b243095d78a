// The built-in recipes, compiled into the binary from recipes/ at build time
// (cmake/embed_recipes.cmake), so that provision is one file that runs in any
// image.  PROVISION_BUILTIN_RECIPES=DIR replaces them with a folder.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

struct EmbeddedRecipe {
    std::string_view path;   // relative to recipes/, e.g. "workloads/comfyui.toml"
    std::string_view text;
};

// Every built-in recipe, in the order the loader reads a folder (byte order of the paths).
const std::vector<EmbeddedRecipe>& embedded_recipes();

// 12 hex digits naming the built-in recipe set (how it is computed:
// cmake/embed_recipes.cmake).
std::string_view embedded_recipes_digest();

// How an embedded recipe is named in messages: "builtin:recipes/<path>".
std::string embedded_recipe_name(const EmbeddedRecipe& recipe);

// The folder PROVISION_BUILTIN_RECIPES names (its value, empty when unset),
// which replaces the embedded recipes; nullopt when empty.  Throws
// Error(invalid_input) when it is not a folder.
std::optional<std::string> builtin_recipe_folder(const std::string& variable_value);

}  // namespace provision
