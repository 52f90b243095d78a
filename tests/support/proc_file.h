// A file of /proc read without exceptions.  A process may end and be reaped
// between the open and the read; the read then fails with ESRCH, which an
// std::ifstream read through istreambuf_iterator turns into an exception.
// Here that reads as what was read before it (usually nothing): a test that
// polls a process as it ends must not fail by that chance.  With it, what
// the tests read of a process's stat.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace proc {

inline std::string read_file(const std::string& path) {
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return text;
    char chunk[4096];
    for (ssize_t got; (got = ::read(fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(got));
    ::close(fd);
    return text;
}

// /proc/PID/stat after the command name: the state first, then the
// parent's pid and the rest; empty where the process is gone.
inline std::string stat_fields(long pid) {
    const std::string text = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? std::string() : text.substr(close + 2);
}

// Whether `pid` is there and not a zombie.
inline bool running(long pid) {
    const std::string fields = stat_fields(pid);
    return !fields.empty() && fields[0] != 'Z';
}

}  // namespace proc
