// Runs several programs at once under one time limit, capturing their
// output.  The validate stage uses it for its per-GPU workers.
#pragma once

#include <string>
#include <vector>

namespace provision {

struct ChildOutcome {
    std::string start_error;  // non-empty when the program could not be started
    bool timed_out = false;   // still running at the limit, so killed
    int exit_code = -1;       // when it exited on its own
    int signal = 0;           // the signal that ended it (SIGKILL after a timeout too)
    std::string out;          // what it wrote to stdout and stderr (each capped at 1 MiB)
    std::string err;
    double seconds = 0;       // from start to end
};

// Starts every command (argv[0] is the program's path; it inherits the
// environment, stdin is /dev/null) at once.  A command still running
// `timeout_s` after the start is killed with SIGKILL, together with any
// process it started (each child leads its own process group).  Returns
// one outcome per command, in order.
std::vector<ChildOutcome> run_children(const std::vector<std::vector<std::string>>& commands, double timeout_s);

// "signal 11 (Segmentation fault)"
std::string describe_signal(int signal);

}  // namespace provision
