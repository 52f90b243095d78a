// The few questions discovery asks the file system, each one system call:
// discovery runs at every container start and must stay well under 1 ms.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace provision::file_probe {

bool exists(const std::string& path);            // follows symlinks
bool is_directory(const std::string& path);      // follows symlinks
bool is_executable_file(const std::string& path);  // a regular file this process may execute

// At most `limit` bytes from the start of `path`; nullopt when it cannot be read.
std::optional<std::string> read_head(const std::string& path, std::size_t limit);

// The path with every symlink resolved; `path` itself when that fails.
std::string resolved(const std::string& path);

// "/a/b/c" -> "/a/b"; "c" -> "."; "/c" -> "/".
std::string parent_of(std::string_view path);
// "/a/b/c" -> "c".
std::string_view file_name_of(std::string_view path);

}  // namespace provision::file_probe
