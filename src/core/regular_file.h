// Reading input files that may be anything: only a regular file is read, and
// only up to a size limit, so a FIFO, a device node (/dev/zero) or a folder
// given where a file belongs can neither block nor exhaust memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <sys/types.h>

namespace provision {

constexpr std::size_t kMaxRecipeBytes = 1024 * 1024;  // the limit remote recipes have too

// "a FIFO", "a character device", "a folder", "a symbolic link", ...
std::string describe_file_type(mode_t mode);

// The contents of `path`, or nullopt with `error` saying why ("is a FIFO, not
// a regular file", "larger than 1048576 bytes", strerror).  Opened without
// blocking (O_NONBLOCK: a FIFO without a writer would wait forever) and
// checked with fstat on the open descriptor, so nothing is read from what
// is not a regular file.  Reads at most `max_bytes`; a longer file fails
// unless `truncate` is set, when its first `max_bytes` are returned.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes, std::string& error,
                                             bool truncate = false);

// The same, throwing Error(invalid_input) "PATH: cannot be read: WHY".
std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes);

}  // namespace provision
