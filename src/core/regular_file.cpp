#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"

namespace provision {

std::string describe_file_type(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

std::optional<RegularFile> RegularFile::open(const std::string& path, OpenError& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        error = {OpenFailure::cannot_open, std::strerror(errno)};
        return std::nullopt;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        error = {OpenFailure::cannot_open, std::strerror(errno)};
        ::close(fd);
        return std::nullopt;
    }
    if (!S_ISREG(info.st_mode)) {
        error = {OpenFailure::not_regular_file, fmt::format("is {}, not a regular file", describe_file_type(info.st_mode))};
        ::close(fd);
        return std::nullopt;
    }
    return RegularFile(fd, static_cast<std::uint64_t>(info.st_size));
}

RegularFile::RegularFile(RegularFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.fd_;
        size_ = other.size_;
        other.fd_ = -1;
    }
    return *this;
}

RegularFile::~RegularFile() {
    if (fd_ >= 0) ::close(fd_);
}

bool RegularFile::read_at(std::uint64_t offset, void* out, std::size_t length) const {
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

std::optional<std::size_t> RegularFile::read_some(std::uint64_t offset, void* out, std::size_t length) const {
    while (true) {
        const ssize_t got = ::pread(fd_, out, length, static_cast<off_t>(offset));
        if (got >= 0) return static_cast<std::size_t>(got);
        if (errno != EINTR) return std::nullopt;
    }
}

std::optional<std::string> RegularFile::read_head(std::size_t max_bytes, bool truncate, std::string& error) const {
    std::string contents;
    // The size from fstat is a hint only: a file may grow while it is read.
    // One byte past the limit tells a file that is too long.
    const std::size_t wanted = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
    contents.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(size_, wanted)));
    char buffer[64 * 1024];
    std::uint64_t offset = 0;
    while (contents.size() < wanted) {
        const std::size_t ask = std::min(sizeof buffer, wanted - contents.size());
        const auto got = read_some(offset, buffer, ask);
        if (!got) {
            error = std::strerror(errno);
            return std::nullopt;
        }
        if (*got == 0) break;
        contents.append(buffer, *got);
        offset += *got;
    }
    if (contents.size() > max_bytes) {
        if (!truncate) {
            error = fmt::format("larger than the limit of {} bytes", max_bytes);
            return std::nullopt;
        }
        contents.resize(max_bytes);
    }
    return contents;
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string& error,
                                             bool truncate) {
    OpenError failure;
    const auto file = RegularFile::open(path, failure);
    if (!file) {
        error = failure.why;
        return std::nullopt;
    }
    return file->read_head(max_bytes, truncate, error);
}

std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes) {
    std::string error;
    auto contents = read_regular_file(path, max_bytes, error);
    if (!contents)
        throw Error(ExitCode::invalid_input, fmt::format("{}: cannot be read: {}", printable(path, 4096), error));
    return std::move(*contents);
}

}  // namespace provision
