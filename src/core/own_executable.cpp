#include "core/own_executable.h"

#include <sys/stat.h>

#include <string>

namespace provision {

bool runs_this_executable(long pid) {
    if (pid <= 0) return false;
    // stat follows the link to the file itself: a deleted or replaced binary
    // still compares by what the process really runs.
    struct stat own {};
    struct stat other {};
    if (::stat("/proc/self/exe", &own) != 0) return false;
    if (::stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &other) != 0) return false;
    return own.st_dev == other.st_dev && own.st_ino == other.st_ino;
}

}  // namespace provision
