#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

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

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string& error,
                                             bool truncate) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        error = std::strerror(errno);
        return std::nullopt;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        error = std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    if (!S_ISREG(info.st_mode)) {
        error = fmt::format("is {}, not a regular file", describe_file_type(info.st_mode));
        ::close(fd);
        return std::nullopt;
    }
    std::string contents;
    // The size from fstat is a hint only: a file may grow while it is read.
    contents.reserve(std::min<std::size_t>(static_cast<std::size_t>(info.st_size), max_bytes) + 1);
    char buffer[64 * 1024];
    while (contents.size() <= max_bytes) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) continue;
            error = std::strerror(errno);
            ::close(fd);
            return std::nullopt;
        }
        if (got == 0) break;
        contents.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);
    if (contents.size() > max_bytes) {
        if (!truncate) {
            error = fmt::format("larger than the limit of {} bytes", max_bytes);
            return std::nullopt;
        }
        contents.resize(max_bytes);
    }
    return contents;
}

std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes) {
    std::string error;
    auto contents = read_regular_file(path, max_bytes, error);
    if (!contents) throw Error(ExitCode::invalid_input, fmt::format("{}: cannot be read: {}", path, error));
    return std::move(*contents);
}

}  // namespace provision
