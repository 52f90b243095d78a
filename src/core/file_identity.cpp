#include "core/file_identity.h"

#include <filesystem>

namespace provision {
namespace fs = std::filesystem;

std::optional<FileId> regular_file_at(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return file_id(info);
}

std::optional<std::string> file_path_problem(const std::string& path) {
    if (path.ends_with('/')) return "it ends in '/', so it names a folder, not a file";
    const std::string last = fs::path(path).filename().string();
    if (last == "." || last == "..") return "its last part is '" + last + "', a folder, not a file";
    return std::nullopt;
}

}  // namespace provision
