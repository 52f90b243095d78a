// Shared by the fuzz targets: the invariant check and an in-memory file.
//
// Every target is a header with one entry point, `fuzz::<target>::one_input`,
// so the libFuzzer binaries (fuzz_*.cpp) and the regression test in
// tests/unit/fuzz_regressions_test.cpp run exactly the same code.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace fuzz {

// Thrown when an input breaks an invariant of the code under test.  The
// libFuzzer binaries turn it into a crash that keeps the input; the
// regression test turns it into a failed test.
struct BrokenInvariant : std::logic_error {
    using std::logic_error::logic_error;
};

#define FUZZ_CHECK(condition)                                                                                    \
    do {                                                                                                         \
        if (!(condition))                                                                                        \
            throw ::fuzz::BrokenInvariant(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #condition); \
    } while (false)

// Whether `message` can be printed on one terminal line as it is: no
// control character (C0, DEL, C1 in UTF-8), which every message that echoes
// input must have escaped (printable(), src/core/text.h).
inline bool printable_as_is(std::string_view message) {
    for (std::size_t i = 0; i < message.size(); ++i) {
        const auto byte = static_cast<unsigned char>(message[i]);
        if (byte < 0x20 || byte == 0x7F) return false;
        const auto next = i + 1 < message.size() ? static_cast<unsigned char>(message[i + 1]) : 0;
        if (byte == 0xC2 && next >= 0x80 && next <= 0x9F) return false;
    }
    return true;
}

// A file that lives in memory (memfd), reachable by path as /proc/self/fd/N,
// so loaders that take a path read the fuzz input without touching the disk.
class MemoryFile {
public:
    explicit MemoryFile(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
        if (fd_ < 0) throw std::runtime_error("memfd_create failed");
    }
    ~MemoryFile() { ::close(fd_); }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    // Replaces the contents; returns the path that reads them.
    std::string hold(std::string_view contents) {
        if (::ftruncate(fd_, 0) != 0 ||
            ::pwrite(fd_, contents.data(), contents.size(), 0) != static_cast<ssize_t>(contents.size()))
            throw std::runtime_error("cannot write the memory file");
        return path();
    }
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

}  // namespace fuzz
