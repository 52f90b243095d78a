#include "recipe/recipe_export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "recipe/builtin_recipes.h"

namespace fs = std::filesystem;

namespace provision {
namespace {

[[noreturn]] void fail(const std::string& what, int error) {
    throw Error(ExitCode::io_failure, fmt::format("--print-recipes: {}: {}", what, std::strerror(error)));
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// link(2) into place: atomic, and it fails with EEXIST rather than replace a
// file that appeared since the check.
void write_new_file(const fs::path& target, std::string_view text) {
    std::string temporary = (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) fail(fmt::format("cannot create a file in {}", target.parent_path().string()), errno);
    int error = 0;
    // Readable by all, as a file written by hand would be (mkostemp makes it 0600).
    if (::fchmod(fd, 0644) != 0 || !write_all(fd, text) || ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error == 0 && ::link(temporary.c_str(), target.c_str()) != 0) error = errno;
    ::unlink(temporary.c_str());
    if (error != 0) fail(fmt::format("cannot write {}", target.string()), error);
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
