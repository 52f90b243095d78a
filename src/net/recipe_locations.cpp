#include "net/recipe_locations.h"

#include <cctype>
#include <set>

#include <unistd.h>

#include "core/termination.h"

#include "net/redaction.h"

namespace provision {

LocalRecipes localize_recipes(const std::vector<std::string>& locations, const FetchOptions& options) {
    LocalRecipes local;
    for (const std::string& location : locations) {
        if (!is_remote(location)) {
            local.paths.push_back(location);
            continue;
        }
        FetchedRecipe fetched = fetch_recipe(location, options);
        local.origins.emplace_back(fetched.path, redact_url(location));
        if (fetched.temporary) local.temporary.push_back(fetched.path);
        local.paths.push_back(std::move(fetched.path));
        local.warnings.insert(local.warnings.end(), fetched.warnings.begin(), fetched.warnings.end());
    }
    return local;
}

void LocalRecipes::remove_temporary() {
    for (const std::string& path : temporary) {
        ::unlink(path.c_str());
        keep_at_termination(path);
    }
    temporary.clear();
}

std::string LocalRecipes::with_origins(std::string message) const {
    std::set<std::string> done;  // a URL given twice has one local copy
    for (const auto& [path, url] : origins) {
        if (!done.insert(path).second) continue;
        const std::string note = " (fetched from " + url + ")";
        for (std::size_t at = message.find(path); at != std::string::npos; at = message.find(path, at)) {
            // After the path's ":line:column", if the message gives them.
            std::size_t end = at + path.size();
            while (end < message.size() &&
                   (message[end] == ':' || std::isdigit(static_cast<unsigned char>(message[end]))))
                ++end;
            while (end > at + path.size() && message[end - 1] == ':') --end;  // keep the ": " that follows
            message.insert(end, note);
            at = end + note.size();
        }
    }
    return message;
}

}  // namespace provision
