#include "recipe/builtin_recipes.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"

namespace provision {

std::string embedded_recipe_name(const EmbeddedRecipe& recipe) {
    return fmt::format("builtin:recipes/{}", recipe.path);
}

std::optional<std::string> builtin_recipe_folder(const std::string& variable_value) {
    if (variable_value.empty()) return std::nullopt;
    std::error_code ec;
    if (!std::filesystem::is_directory(variable_value, ec))
        throw Error(ExitCode::invalid_input,
                    fmt::format("PROVISION_BUILTIN_RECIPES={}: not a folder (it replaces the built-in recipes; "
                                "unset it to use those compiled in)",
                                echoed_path(variable_value)));
    return variable_value;
}

}  // namespace provision
