// Which file a path names, as the kernel tells files apart (device and
// inode), not as the path is spelled: used to remove at termination only
// the very file provision wrote.  And whether a path can name a file at all.
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

}  // namespace provision
