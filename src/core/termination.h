// SIGTERM, SIGINT and SIGHUP before the handoff: provision stops at once in
// every phase (a fetch from a server that never answers, detection,
// validation, the env file write), removes the files registered below,
// stops its validation workers, and exits 128 + the signal's number.  As
// PID 1 a signal without a handler is ignored by the kernel, so the handler
// is what makes `docker stop` work at all.  The handler runs on the main
// thread only (another thread that receives the signal passes it on), so
// what the main thread does with the signals held back (TerminationDeferred)
// is one step for it.
//
// SIGPIPE is ignored, so that a write to a pipe whose reader has gone fails
// with EPIPE (a broken stdout is then a failed write, as a closed one is)
// instead of killing provision.
//
// Before the exec the default dispositions (SIGPIPE's too) and an empty
// signal mask are restored, so the workload gets signals as if started
// directly.
#pragma once

#include <signal.h>

#include <string>
#include <sys/types.h>

#include "core/file_identity.h"

namespace provision {

void install_termination_handlers();
void restore_default_signals();

// Removed by the handler when a signal stops the run, but only while `path`
// still names that very file (lstat: a regular file with the same device
// and inode): never a symbolic link, a device node, a FIFO, or a file that
// someone else has put there since.  Registering a path again replaces its
// file.  Fixed storage for a few paths at a time (temporary files during
// a write, the published labels and metrics); call from the main thread.
void remove_at_termination(const std::string& path, const FileId& file);
// Ends the registration of `path` (a temporary file renamed or removed).
void keep_at_termination(const std::string& path);

// Holds SIGTERM, SIGINT and SIGHUP back for its lifetime (in this thread),
// so that a few steps (creating a file and registering it, a rename and the
// registration of the renamed file) are one step for the handler: a signal
// arriving in between is delivered once all are done.
class TerminationDeferred {
public:
    TerminationDeferred();
    ~TerminationDeferred();
    TerminationDeferred(const TerminationDeferred&) = delete;
    TerminationDeferred& operator=(const TerminationDeferred&) = delete;

private:
    sigset_t previous_;
};

// A child's process group, killed by the handler when a signal stops the run.
void remember_process_group(pid_t group);
void forget_process_group(pid_t group);

}  // namespace provision
