#include "core/process_clock.h"

namespace provision {
namespace {

// A namespace-scope object is initialised while the program loads, so the
// first call below comes before main() runs.
[[maybe_unused]] const std::chrono::steady_clock::time_point kLoaded = process_start();

}  // namespace

std::chrono::steady_clock::time_point process_start() {
    static const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    return start;
}

double ms_since_start(std::chrono::steady_clock::time_point at) {
    return std::chrono::duration<double, std::milli>(at - process_start()).count();
}

}  // namespace provision
