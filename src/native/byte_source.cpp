#include "native/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace provision::native {

ReadResult<std::shared_ptr<const FileSource>> FileSource::open(const std::string& path) {
    // stat first: opening a FIFO or a device can block or have effects.
    struct stat before {};
    if (::stat(path.c_str(), &before) != 0)
        return ReadError{ReadErrorKind::cannot_open, fmt::format("{}: {}", path, std::strerror(errno))};
    if (!S_ISREG(before.st_mode))
        return ReadError{ReadErrorKind::not_regular_file, fmt::format("{}: not a regular file", path)};
    // O_NONBLOCK as well, in case the path was replaced in between; fstat
    // then checks what was really opened.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return ReadError{ReadErrorKind::cannot_open, fmt::format("{}: {}", path, std::strerror(errno))};
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
        ::close(fd);
        return ReadError{ReadErrorKind::not_regular_file, fmt::format("{}: not a regular file", path)};
    }
    return std::shared_ptr<const FileSource>(new FileSource(fd, static_cast<std::uint64_t>(opened.st_size), path));
}

FileSource::~FileSource() { ::close(fd_); }

bool FileSource::read_at(std::uint64_t offset, void* out, std::size_t length) const {
    if (!within(offset, length, size_)) return false;
    auto* bytes = static_cast<char*>(out);
    while (length > 0) {
        const ssize_t got = ::pread(fd_, bytes, length, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;  // an error, or the file shrank
        bytes += got;
        offset += static_cast<std::uint64_t>(got);
        length -= static_cast<std::size_t>(got);
    }
    return true;
}

bool MemorySource::read_at(std::uint64_t offset, void* out, std::size_t length) const {
    if (!within(offset, length, bytes_.size())) return false;
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return true;
}

}  // namespace provision::native
