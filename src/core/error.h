// The one exception type that carries a failure to main(), which alone
// decides the exit status.  Library code throws it; it never calls exit().
#pragma once

#include <stdexcept>
#include <string>

namespace provision {

// Exit statuses fixed by docs/DESIGN.md; scripts depend on them.
enum class ExitCode : int {
    ok = 0,
    internal_error = 1,   // a bug or exhausted memory (std::bad_alloc): nothing was written, no COMMAND started
    usage = 2,            // unknown flag, bad option value, unknown mechanism name
    invalid_input = 3,    // a recipe or fixture is malformed or invalid
    no_mechanism = 4,     // nothing can serve, or an override cannot be served
    validation_failed = 5,
    io_failure = 6,       // the env file (or another output) could not be written
    gpu_busy = 7,         // a GPU is held by other processes: not measured, and --busy-gpu fail stops the run
    cannot_execute = 126,
    command_not_found = 127,
};

class Error : public std::runtime_error {
public:
    Error(ExitCode code, std::string message)
        : std::runtime_error(std::move(message)), code_(code) {}
    ExitCode code() const { return code_; }

private:
    ExitCode code_;
};

}  // namespace provision
