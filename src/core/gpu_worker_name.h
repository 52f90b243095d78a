// The name provision's GPU workers give themselves, so that a run can tell
// one (its own early worker, or a finished run's that still tears its
// context down) from the processes that really share a GPU.
#pragma once

#include <string_view>

namespace provision {

// The kernel's name of the process (`comm`, 15 characters at most); the
// worker is started through /proc/self/exe, which alone would name it "exe".
inline constexpr std::string_view gpu_worker_process_name = "provision-gpu";

// Gives the calling process that name (prctl PR_SET_NAME).
void name_this_process_as_gpu_worker();

// Whether PID is named so: /proc/PID/comm, which stays readable while the
// process exits (its /proc/PID/exe and cmdline are gone by the time the
// driver tears its context down).  False for a PID not visible here.
bool is_gpu_worker_process(long pid);

}  // namespace provision
