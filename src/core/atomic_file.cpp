#include "core/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/regular_file.h"
#include "core/termination.h"

namespace provision {
namespace fs = std::filesystem;
namespace {

// nullopt when only a regular file, or nothing, is at `path`.
std::optional<WriteFailure> refuse_unless_regular_or_absent(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        if (errno == ENOENT) return std::nullopt;
        return WriteFailure{"cannot inspect it", errno, ""};
    }
    if (S_ISREG(info.st_mode)) return std::nullopt;
    std::string what = describe_file_type(info.st_mode);
    if (S_ISLNK(info.st_mode)) {
        std::error_code ignored;
        const auto target = fs::read_symlink(path, ignored);
        if (!target.empty()) what += fmt::format(" to {}", target.string());
    }
    return WriteFailure{"", 0, what};
}

}  // namespace

std::string WriteFailure::message() const {
    if (refused()) return fmt::format("it is {}, not a regular file", found);
    if (error == 0) return step;
    return fmt::format("{}: {}", step, std::strerror(error));
}

std::optional<WriteFailure> write_temporary_file(std::string& path_template, int suffix_length,
                                                 std::string_view contents, mode_t mode, FileId* created) {
    int fd = -1;
    int create_error = 0;
    FileId file;
    {
        // A signal between creating the file and registering it would leave it behind.
        const TerminationDeferred deferred;
        fd = ::mkostemps(path_template.data(), suffix_length, O_CLOEXEC);
        struct stat info {};
        if (fd >= 0 && ::fstat(fd, &info) == 0) {
            file = file_id(info);
            remove_at_termination(path_template, file);
        } else if (fd >= 0) {
            create_error = errno;
            ::close(fd);
            ::unlink(path_template.c_str());
            fd = -1;
        } else {
            create_error = errno;
        }
    }
    if (fd < 0) {
        const fs::path folder = fs::path(path_template).parent_path();
        return WriteFailure{fmt::format("cannot create a temporary file in {}", folder.empty() ? "." : folder.string()),
                            create_error, ""};
    }

    auto abandon = [&](const char* step) {
        const int error = errno;
        ::close(fd);
        ::unlink(path_template.c_str());
        keep_at_termination(path_template);
        return WriteFailure{step, error, ""};
    };
    if (::fchmod(fd, mode) != 0) return abandon("cannot set the file mode");
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return abandon("write failed");
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) return abandon("fsync failed");
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(path_template.c_str());
        keep_at_termination(path_template);
        return WriteFailure{"close failed", error, ""};
    }
    if (created) *created = file;
    return std::nullopt;
}

std::optional<WriteFailure> write_file_atomically(const std::string& path, std::string_view contents,
                                                  const AtomicWriteOptions& options) {
    const fs::path target(path);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (options.create_folders) {
        if (const auto problem = file_path_problem(path)) return WriteFailure{*problem, 0, ""};
        std::error_code ignored;  // a folder that cannot be made fails the write below, which says why
        if (target.has_parent_path()) fs::create_directories(folder, ignored);
    }
    // Appended, not "." + name + "...": GCC 12 at -O3 takes the concatenation
    // for an overlapping copy (-Wrestrict; GCC bugs 105329, 105651).
    std::string name = ".";
    name += target.filename().string();
    name += ".XXXXXX";
    std::string temporary = (folder / name).string();
    if (options.only_replace_regular_file) {
        if (auto refused = refuse_unless_regular_or_absent(path)) return refused;
    }

    FileId written;
    if (auto failure = write_temporary_file(temporary, 0, contents, options.mode, &written)) return failure;
    struct Forget {
        const std::string& path;
        ~Forget() { keep_at_termination(path); }
    } forget{temporary};

    {
        // The file takes its name and stays registered under one of its two
        // names: for the handler, the rename (or link) and the registration
        // are one step.
        const TerminationDeferred deferred;
        if (options.replace) {
            if (::rename(temporary.c_str(), path.c_str()) != 0) {
                const int error = errno;
                ::unlink(temporary.c_str());
                return WriteFailure{"rename failed", error, ""};
            }
        } else {
            const int error = ::link(temporary.c_str(), path.c_str()) != 0 ? errno : 0;
            ::unlink(temporary.c_str());
            if (error != 0) return WriteFailure{"link failed", error, ""};
        }
        if (options.remove_at_termination) remove_at_termination(path, written);
    }
    // Make the new name itself durable.
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return std::nullopt;
}

}  // namespace provision
