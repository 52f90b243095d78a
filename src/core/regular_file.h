// Reading input files that may be anything: only a regular file is read, and
// only up to a size limit, so a FIFO, a device node (/dev/zero) or a folder
// given where a file belongs can neither block nor exhaust memory.
//
// RegularFile::open is the one way every reader of provision opens a file
// (recipes, fixtures, METADATA, RECORD, WHEEL, pyvenv.cfg, .python-version,
// a COMMAND's "#!" line, ELF files, torch/version.py, ld.so.conf.d): no
// reader can forget O_NONBLOCK or the file-type check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <sys/types.h>

namespace provision {

constexpr std::size_t kMaxRecipeBytes = 1024 * 1024;  // the limit remote recipes have too

// "a FIFO", "a character device", "a folder", "a symbolic link", ...
std::string describe_file_type(mode_t mode);

enum class OpenFailure {
    cannot_open,       // missing, no permission, too many open files, ...
    not_regular_file,  // a FIFO, a device, a socket or a folder: nothing is read
};

struct OpenError {
    OpenFailure failure = OpenFailure::cannot_open;
    std::string why;  // strerror, or "is a FIFO, not a regular file"
};

// A regular file opened for reading; the descriptor closes with the object.
class RegularFile {
public:
    // Opens `path` with O_NONBLOCK (a FIFO without a writer would wait
    // forever), O_NOCTTY and O_CLOEXEC, then checks with fstat on the open
    // descriptor that it is a regular file: anything else is closed unread.
    static std::optional<RegularFile> open(const std::string& path, OpenError& error);

    RegularFile(RegularFile&& other) noexcept;
    RegularFile& operator=(RegularFile&& other) noexcept;
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;
    ~RegularFile();

    std::uint64_t size() const { return size_; }  // as fstat saw it at open

    // Exactly `length` bytes at `offset`; false when the file is shorter
    // (it may have shrunk since open) or a read fails.
    bool read_at(std::uint64_t offset, void* out, std::size_t length) const;

    // Up to `length` bytes at `offset`: how many were read (0 at the end of
    // the file), or nullopt with errno set when the read fails.
    std::optional<std::size_t> read_some(std::uint64_t offset, void* out, std::size_t length) const;

    // The contents from the start, at most `max_bytes`.  A longer file gives
    // nullopt ("larger than the limit of N bytes") unless `truncate` is set,
    // when its first `max_bytes` are returned.  Never reserves more than the
    // file holds, so a large limit costs nothing for a small file.
    std::optional<std::string> read_head(std::size_t max_bytes, bool truncate, std::string& error) const;

private:
    RegularFile(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// The contents of `path`, or nullopt with `error` saying why ("is a FIFO, not
// a regular file", "larger than the limit of 1048576 bytes", strerror).
// Opened by RegularFile::open.  Reads at most `max_bytes`; a longer file
// fails unless `truncate` is set, when its first `max_bytes` are returned.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string& error,
                                             bool truncate = false);

// The same, throwing Error(invalid_input) "PATH: cannot be read: WHY".
std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes);

}  // namespace provision
