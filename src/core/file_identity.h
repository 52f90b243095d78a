// Which file a path names, as the kernel tells files apart (device and
// inode), not as the path is spelled: "./x", "a/../x", a symbolic link and
// a hard link all lead to one file.  Used to refuse two outputs that are one
// file, and to remove at termination only the very file provision wrote.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace provision {

struct FileId {
    dev_t device = 0;
    ino_t inode = 0;
    bool operator==(const FileId&) const = default;
};

inline FileId file_id(const struct stat& info) { return {info.st_dev, info.st_ino}; }

// The regular file at `path` itself (lstat: a symbolic link is not
// followed); nullopt when nothing, or something else, is there.
std::optional<FileId> regular_file_at(const std::string& path);

// Why `path` cannot name a file to write: it ends in '/', or its last part
// is "." or ".." (each names a folder).  nullopt when it can.
std::optional<std::string> file_path_problem(const std::string& path);

// Where writing to `path` would put the file: the file the path leads to
// when one exists (symbolic links followed), else the nearest folder above
// it that exists and the rest of the path from there (".." and "." worked
// out), so a file that does not exist yet is the same under two spellings.
struct PathTarget {
    FileId anchor;     // the file itself, or the nearest existing folder above it
    std::string rest;  // "" for an existing file; else the path below `anchor`
    bool operator==(const PathTarget&) const = default;
};
PathTarget path_target(const std::string& path);

}  // namespace provision
