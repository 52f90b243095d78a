// The few questions discovery asks the file system, each one system call:
// discovery runs at every container start and must stay well under 1 ms.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::file_probe {

bool exists(const std::string& path);            // follows symlinks
bool is_directory(const std::string& path);      // follows symlinks
bool is_regular_file(const std::string& path);   // follows symlinks (Python's os.path.isfile)
bool is_executable_file(const std::string& path);  // a regular file this process may execute

// The names in `folder` (without "." and ".."), sorted; empty when it
// cannot be listed.  Names are taken literally: nothing is a pattern.
std::vector<std::string> folder_names(const std::string& folder);

// At most `limit` bytes from the start of `path`; nullopt when it cannot be
// read or is not a regular file (core/regular_file.h: a FIFO never blocks).
std::optional<std::string> read_head(const std::string& path, std::size_t limit);

// The path with every symlink resolved; `path` itself when that fails.
std::string resolved(const std::string& path);

// The process's current folder; "" when it cannot be told.
std::string current_folder();

// `path` made absolute against `cwd` and normalised lexically, as Python's
// os.path.abspath does ("./bin/../bin/python3" -> "CWD/bin/python3"):
// symlinks are not followed, so a venv's bin/python3 stays in the venv.
std::string absolute(std::string_view path, std::string_view cwd);

// "/a/b/c" -> "/a/b"; "c" -> "."; "/c" -> "/".
std::string parent_of(std::string_view path);
// "/a/b/c" -> "c".
std::string_view file_name_of(std::string_view path);

}  // namespace provision::file_probe
