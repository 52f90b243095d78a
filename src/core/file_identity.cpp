#include "core/file_identity.h"

namespace provision {

std::optional<FileId> regular_file_at(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return file_id(info);
}

}  // namespace provision
