// When this process started, on the monotonic clock: the zero of the
// report's phase timings.  Read when the program is loaded, before main().
#pragma once

#include <chrono>

namespace provision {

std::chrono::steady_clock::time_point process_start();

// Milliseconds from the process's start to `at`.
double ms_since_start(std::chrono::steady_clock::time_point at);

}  // namespace provision
