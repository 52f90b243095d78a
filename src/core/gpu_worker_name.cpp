#include "core/gpu_worker_name.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

namespace provision {

void name_this_process_as_gpu_worker() {
    const std::string name(gpu_worker_process_name);
    ::prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
}

bool is_gpu_worker_process(long pid) {
    if (pid <= 0) return false;
    const std::string path = "/proc/" + std::to_string(pid) + "/comm";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    char buffer[32];  // comm is at most 15 characters and a newline
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    if (got <= 0) return false;
    std::string_view name(buffer, static_cast<std::size_t>(got));
    if (name.back() == '\n') name.remove_suffix(1);
    return name == gpu_worker_process_name;
}

}  // namespace provision
