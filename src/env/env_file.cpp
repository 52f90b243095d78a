#include "env/env_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/termination.h"

namespace provision {

std::string shell_quote(const std::string& value) {
    std::string quoted = "'";
    for (const char c : value) {
        if (c == '\'') quoted += "'\\''";
        else quoted += c;
    }
    quoted += "'";
    return quoted;
}

std::string render_env_file(const EnvSettings& settings, const std::string& header_comment) {
    std::ostringstream out;
    std::istringstream header(header_comment);
    for (std::string line; std::getline(header, line);) out << "# " << line << "\n";
    for (const auto& [name, value] : settings.entries()) {
        if (value.find('\0') != std::string::npos)
            throw Error(ExitCode::invalid_input, fmt::format("the value of {} holds a NUL byte", name));
        out << "export " << name << "=" << shell_quote(value) << "\n";
    }
    return out.str();
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw Error(ExitCode::io_failure,
                fmt::format("cannot write the env file {}: {}: {} (the previous file, if any, is unchanged)", path,
                            what, std::strerror(error)));
}

// The rename replaces whatever is at `path`: only a regular file (or
// nothing) may be replaced.  A device node (/dev/null as root), a FIFO, a
// folder or a symbolic link someone put there on purpose stays as it is.
void refuse_unless_regular_or_absent(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        if (errno == ENOENT) return;
        fail(path, "cannot inspect it", errno);
    }
    if (S_ISREG(info.st_mode)) return;
    std::string what = describe_file_type(info.st_mode);
    if (S_ISLNK(info.st_mode)) {
        std::error_code ignored;
        const auto target = std::filesystem::read_symlink(path, ignored);
        if (!target.empty()) what += fmt::format(" to {}", target.string());
    }
    throw Error(ExitCode::io_failure,
                fmt::format("will not write the env file {}: it is {}, not a regular file, and is left as it is "
                            "(an env file replaces only a regular file; --env-file {} discards the settings)",
                            path, what, kDiscardedEnvFile));
}

}  // namespace

void write_env_file_atomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string temporary = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    refuse_unless_regular_or_absent(path);

    // mkostemp opens with O_CREAT|O_EXCL: never through a planted symlink.
    // O_CLOEXEC: a child started meanwhile does not inherit the descriptor.
    const int fd = mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) fail(path, fmt::format("cannot create a temporary file in {}", folder.string()), errno);
    remember_temporary_file(temporary);  // removed if a signal stops the run mid-write
    struct Forget {
        const std::string& path;
        ~Forget() { forget_temporary_file(path); }
    } forget{temporary};

    auto abandon = [&](const std::string& what) {
        const int error = errno;
        ::close(fd);
        ::unlink(temporary.c_str());
        fail(path, what, error);
    };
    if (::fchmod(fd, 0644) != 0) abandon("cannot set the file mode");
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            abandon("write failed");
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) abandon("fsync failed");
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        fail(path, "close failed", error);
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        fail(path, "rename failed", error);
    }
    // Make the rename itself durable.
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

}  // namespace provision
