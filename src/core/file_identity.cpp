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

PathTarget path_target(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) return {file_id(info), ""};
    fs::path rest = fs::path(path).filename();
    fs::path folder = fs::path(path).parent_path();
    // Up to the first folder that exists; "/" (or "." for a relative path) always does.
    while (!folder.empty() && ::stat(folder.c_str(), &info) != 0) {
        if (folder == folder.root_path()) break;
        rest = folder.filename() / rest;
        folder = folder.parent_path();
    }
    if (folder.empty() && ::stat(".", &info) != 0) info = {};
    return {file_id(info), rest.lexically_normal().string()};
}

}  // namespace provision
