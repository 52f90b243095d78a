#include "worker/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace provision {

bool lower_this_thread_priority() {
    // On Linux a nice value is a thread's own, addressed by its thread id.
    const auto thread = static_cast<id_t>(syscall(SYS_gettid));
    return setpriority(PRIO_PROCESS, thread, 19) == 0;
}

}  // namespace provision
