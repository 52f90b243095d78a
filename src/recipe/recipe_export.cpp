#include "recipe/recipe_export.h"

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "recipe/builtin_recipes.h"

namespace fs = std::filesystem;

namespace provision {
namespace {

[[noreturn]] void fail(const std::string& what, int error) {
    throw Error(ExitCode::io_failure, fmt::format("--print-recipes: {}: {}", what, std::strerror(error)));
}

// link(2) into place: atomic, and it fails with EEXIST rather than replace a
// file that appeared since the check.  Readable by all, as a file written by
// hand would be.
void write_new_file(const fs::path& target, std::string_view text) {
    const auto failure = write_file_atomically(target.string(), text, {.mode = 0644, .replace = false});
    if (!failure) return;
    throw Error(ExitCode::io_failure, fmt::format("--print-recipes: cannot write {}: {}", target.string(),
                                                  failure->message()));
}

}  // namespace

std::vector<std::string> write_embedded_recipes(const std::string& folder) {
    const fs::path root(folder);
    std::vector<std::string> existing;
    for (const EmbeddedRecipe& recipe : embedded_recipes()) {
        std::error_code ec;
        const fs::path target = root / recipe.path;
        if (fs::exists(fs::symlink_status(target, ec))) existing.push_back(target.string());
    }
    if (!existing.empty())
        throw Error(ExitCode::io_failure,
                    fmt::format("--print-recipes: {} already exist{} (nothing written; choose an empty or new folder)",
                                fmt::join(existing, ", "), existing.size() == 1 ? "s" : ""));

    std::vector<std::string> written;
    for (const EmbeddedRecipe& recipe : embedded_recipes()) {
        const fs::path target = root / recipe.path;
        std::error_code ec;
        fs::create_directories(target.parent_path(), ec);
        if (ec) fail(fmt::format("cannot create the folder {}", target.parent_path().string()), ec.value());
        write_new_file(target, recipe.text);
        written.push_back(target.string());
    }
    return written;
}

}  // namespace provision
