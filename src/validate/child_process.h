// Child processes the validate stage talks to: started with a pipe on each
// of stdin, stdout and stderr, fed and read without blocking, stopped with
// their whole process group.  The per-GPU check workers run in these.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace provision {

// How a child ended, and what it wrote.
struct ChildOutcome {
    std::string start_error;  // non-empty when the program could not be started
    bool timed_out = false;   // still running at the limit, so killed
    int exit_code = -1;       // when it exited on its own
    int signal = 0;           // the signal that ended it (SIGKILL after a timeout too)
    std::string out;          // what it wrote to stdout and stderr (each capped at 1 MiB)
    std::string err;
    double seconds = 0;       // from start to end
};

class ChildProcess {
public:
    using Clock = std::chrono::steady_clock;

    // Starts command (argv[0] is the program's path) with provision's
    // environment, the variables in `environment` set or replaced, in a
    // process group of its own (so a kill reaches whatever it starts) that
    // a SIGTERM to provision stops too.  start_error() says why when it
    // could not be started.
    ChildProcess(const std::vector<std::string>& command, const std::map<std::string, std::string>& environment = {});
    // A child that has not exited is killed; none is waited for.  One that
    // was let go (let_go()) is left to finish on its own.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    const std::string& start_error() const { return outcome_.start_error; }
    bool running() const { return pid_ > 0 && !ended_; }
    Clock::time_point started_at() const { return start_; }

    // Writes to its stdin; false when it reads no more (it ended, or closed
    // its end).  Never raises SIGPIPE.  Meant for a few lines.
    bool write_input(const std::string& text);
    void close_input();

    // Reads what has arrived on stdout and stderr, without blocking.
    void read_available();
    // Descriptors to poll for output; -1 once closed.
    int out_fd() const { return out_fd_; }
    int err_fd() const { return err_fd_; }
    const std::string& out() const { return outcome_.out; }

    // True once it has exited (reaped here, without waiting).
    bool poll_exit();
    // SIGKILL to its process group, then waits for it (timed_out marks why).
    void kill(bool timed_out);
    // Leaves it to finish on its own: not killed when this object goes.
    void let_go() { let_go_ = true; }

    // What it did; final once it has ended.
    const ChildOutcome& outcome() const { return outcome_; }

private:
    void record_end(int status);

    pid_t pid_ = -1;
    int in_fd_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool ended_ = false;
    bool let_go_ = false;
    Clock::time_point start_;
    ChildOutcome outcome_;
};

// Starts every command at once, closes their input, and waits until each
// has ended; one still running `timeout_s` after its start is killed with
// its process group.  One outcome per command, in order.
std::vector<ChildOutcome> run_children(const std::vector<std::vector<std::string>>& commands, double timeout_s);

// Sleeps until one of the children has output, or for at most `limit`.
void wait_for_output(const std::vector<const ChildProcess*>& children, std::chrono::milliseconds limit);

// "signal 11 (Segmentation fault)"
std::string describe_signal(int signal);

}  // namespace provision
