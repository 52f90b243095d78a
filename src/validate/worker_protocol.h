// What the validation worker and its parent say to each other.
//
// Command line:  __check-worker --gpu N --mode quick|full [--fault SPEC] -- CHECK...
// Output:        one line per finished check, each a TOML document of its own,
//                   result = { name = "gemm.tf32", status = "passed", max_rel_error = 0.00041, ... }
//                written and flushed as soon as the check ends, so the results of
//                a worker killed later survive, and a line cut off by the kill is
//                simply not a result.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "validate/validation.h"

namespace provision {

// The worker's command line, without the program path.
std::vector<std::string> worker_arguments(const GpuChecks& job, const ValidationOptions& options);

// One result line (no newline), and back.  Only `gpu` is not carried: the
// parent knows which worker printed the line.  A status a worker does not
// report (any but passed, failed, unsupported, error) is read as an error
// whose detail quotes it.
std::string format_result_line(const CheckOutcome& result);
std::optional<CheckOutcome> parse_result_line(const std::string& line);

struct WorkerOutput {
    std::map<std::string, CheckOutcome> results;  // by check name
    std::string unparsed;                         // the first line that was not a result, if any
};
WorkerOutput parse_worker_output(const std::string& text);

// The fault a check runs with under a test-only fault spec: comma-separated
// PATTERN=FAULT entries, PATTERN a check name or "*"; the first match wins.
// "" when none matches.
std::string fault_for_check(const std::string& spec, const std::string& check);

// Worker output in a detail: in single quotes, cut after 200 characters.
std::string quoted(std::string text);

}  // namespace provision
