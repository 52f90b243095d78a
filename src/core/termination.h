// SIGTERM, SIGINT and SIGHUP before the handoff: provision stops at once in
// every phase (a fetch from a server that never answers, detection,
// validation, the env file write), removes its temporary files, stops its
// validation workers, and exits 128 + the signal's number.  As PID 1 a
// signal without a handler is ignored by the kernel, so the handler is what
// makes `docker stop` work at all.  Before the exec the default dispositions
// and an empty signal mask are restored, so the workload gets signals as if
// started directly.
#pragma once

#include <signal.h>

#include <string>
#include <sys/types.h>

namespace provision {

void install_termination_handlers();
void restore_default_signals();

// Removed by the handler when a signal stops the run.  Registration is for
// the duration of one write; forget_temporary_file() ends it.  At most a
// few at a time (the env file's, a cache entry's, a fetched recipe's).
void remember_temporary_file(const std::string& path);
void forget_temporary_file(const std::string& path);

// A file provision keeps fresh while it runs (--repeat's node labels and
// metrics): the handler removes it when a signal stops the run, as GPU
// Feature Discovery removes its labels, so nothing stale outlives provision.
// Shares the temporary files' slots, and stays registered until exit.
void remove_at_termination(const std::string& path);

// Holds SIGTERM, SIGINT and SIGHUP back for its lifetime (in this thread),
// so that creating a temporary file and remembering it is one step for the
// handler: a signal arriving in between is delivered once both are done.
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
