// The child's entry: main() calls check_worker_main with the arguments that
// follow "__check-worker"; the worker reads the check names and link
// commands from stdin and prints its lines on stdout (worker_protocol.h).
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace provision {

// Returns the child's exit status: 0 once every check has a result, 2 on
// bad arguments.
int check_worker_main(const std::vector<std::string>& args);

// The same with its streams passed in (for tests).
int run_check_worker(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace provision
