// Whether a process runs this very executable: how provision tells its own
// GPU workers (`provision __check-worker`, a finished run's still tearing
// down) from the processes that really share a GPU.
#pragma once

namespace provision {

// True when /proc/PID/exe is the same file (device and inode) as
// /proc/self/exe.  False for a PID that does not exist here (another PID
// namespace's, one that has exited) or whose executable cannot be read.
bool runs_this_executable(long pid);

}  // namespace provision
