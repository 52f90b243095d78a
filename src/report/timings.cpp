#include "report/timings.h"

#include <algorithm>

#include "core/process_clock.h"

namespace provision {

std::string_view to_string(Phase phase) {
    switch (phase) {
        case Phase::recipes: return "recipes";
        case Phase::detection: return "detection";
        case Phase::python: return "python";
        case Phase::compiled_code: return "compiled_code";
        case Phase::selection: return "selection";
        case Phase::worker_ready: return "worker_ready";
        case Phase::checks: return "checks";
        case Phase::env_file: return "env_file";
        case Phase::total: return "total";
    }
    return "?";
}

void PhaseClock::mark(Phase phase) { mark_at(phase, std::chrono::steady_clock::now()); }

void PhaseClock::mark_at(Phase phase, std::chrono::steady_clock::time_point at) {
    std::erase_if(timings_, [phase](const PhaseTiming& timing) { return timing.phase == phase; });
    timings_.push_back({phase, ms_since_start(at)});
    // Listed in the order of the phases, whatever the order of the marks.
    std::stable_sort(timings_.begin(), timings_.end(),
                     [](const PhaseTiming& a, const PhaseTiming& b) { return a.phase < b.phase; });
}

}  // namespace provision
