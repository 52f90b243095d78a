// The user's recipe locations (--recipe, PROVISION_RECIPE) as local paths
// for the recipe loader: files and folders pass through, URLs are fetched
// (net/recipe_fetch.h) and replaced by the local copy.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "net/recipe_fetch.h"

namespace provision {

struct LocalRecipes {
    std::vector<std::string> paths;     // in the order given, so later recipes still merge over earlier ones
    std::vector<std::string> warnings;  // fetch warnings, already redacted
    std::vector<std::pair<std::string, std::string>> origins;  // local copy -> its URL, redacted
    std::vector<std::string> temporary;  // copies in the temporary folder: remove_temporary() once loaded

    LocalRecipes() = default;
    LocalRecipes(const LocalRecipes&) = delete;
    LocalRecipes& operator=(const LocalRecipes&) = delete;
    LocalRecipes(LocalRecipes&&) = default;
    ~LocalRecipes() { remove_temporary(); }
    void remove_temporary();

    // `message` (a loader error naming file:line:column) with each local
    // copy followed by the URL it came from, which is what the user wrote.
    std::string with_origins(std::string message) const;
};

// Throws what fetch_recipe throws: Error(invalid_input) when a URL yields
// neither a fresh nor a cached copy, or is refused.
LocalRecipes localize_recipes(const std::vector<std::string>& locations, const FetchOptions& options);

}  // namespace provision
