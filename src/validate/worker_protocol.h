// What the validation worker and its parent say to each other.
//
// Command line:  __check-worker --gpu N --mode quick|full [--seed S] [--fault SPEC] [--simulate]
// Input:         the names of the checks to run, one a line, ended by an
//                empty line.  The worker starts opening its GPU before they
//                arrive; end of input with no name means it is not needed.
// Output:        one line each, a TOML document of its own, flushed at once,
//                so the lines of a worker killed later survive, and a line
//                cut off by the kill is simply not one:
//                   ready = { at_ns = ..., open_ms = 231.5, uuid = "GPU-...", capability = "9.0" }
//                   result = { name = "gemm.tf32", status = "passed", max_rel_error = 0.00041, ... }
//                   done = { at_ns = ..., waited_ms = 0.4 }
//                `at_ns` is the monotonic clock (CLOCK_MONOTONIC, the same
//                for every process of the machine), so the parent learns
//                when a line was written, not when it got round to reading
//                it.  A worker that cannot open its GPU says so in `ready`
//                (`error = "..."`) and gives every check that error.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "validate/validation.h"

namespace provision {

// The worker's command line, without the program path.
std::vector<std::string> worker_arguments(int cuda_device, const ValidationOptions& options);

// What the parent writes to a worker's input: the names and the end mark.
std::string format_check_list(const std::vector<std::string>& checks);

using MonotonicTime = std::chrono::steady_clock::time_point;

struct WorkerReady {
    MonotonicTime at;
    double open_ms = 0;      // opening the GPU, from the worker's start
    std::string uuid;        // of the GPU it opened, when known
    std::string capability;  // "9.0"
    std::string error;       // why it could not open the GPU; empty when it did
};

std::string format_ready_line(const WorkerReady& ready);
// waited_ms: how long the checks' device halves waited, once the GPU was
// open, for their host halves (inputs, references) to be ready.
std::string format_done_line(MonotonicTime at, double waited_ms = 0);

// One result line (no newline), and back.  Only `gpu` is not carried: the
// parent knows which worker printed the line.  A status a worker does not
// report (any but passed, failed, unsupported, error) is read as an error
// whose detail quotes it.
std::string format_result_line(const CheckOutcome& result);
std::optional<CheckOutcome> parse_result_line(const std::string& line);

// Everything a worker has printed so far, read line by line as it arrives.
struct WorkerOutput {
    std::optional<WorkerReady> ready;
    std::map<std::string, CheckOutcome> results;  // by check name
    std::optional<MonotonicTime> done;
    std::string unparsed;                         // the first line that was none of these, if any
};
// Whole lines only: a last line without its newline waits for the rest.
WorkerOutput parse_worker_output(const std::string& text);

// The fault a check runs with under a test-only fault spec: comma-separated
// PATTERN=FAULT entries, PATTERN a check name or "*"; the first match wins.
// "" when none matches.
std::string fault_for_check(const std::string& spec, const std::string& check);

// Worker output in a detail: in single quotes, cut after 200 characters.
std::string quoted(std::string text);

}  // namespace provision
