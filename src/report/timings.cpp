#include "report/timings.h"

#include <algorithm>

#include "core/process_clock.h"

namespace provision {

std::string_view to_string(Phase phase) {
    switch (phase) {
        case Phase::recipes: return "recipes";
        case Phase::detection: return "detection";
        case Phase::network: return "network";
        case Phase::fabric: return "fabric";
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

void PhaseClock::mark_gpu(int gpu, TimePoint started, std::optional<TimePoint> running,
                          std::optional<TimePoint> ready, std::optional<TimePoint> done) {
    std::erase_if(gpus_, [gpu](const GpuTiming& timing) { return timing.gpu == gpu; });
    GpuTiming timing{gpu, ms_since_start(started), {}, {}, {}};
    if (running) timing.running = ms_since_start(*running);
    if (ready) timing.ready = ms_since_start(*ready);
    if (done) timing.done = ms_since_start(*done);
    gpus_.push_back(timing);
    std::stable_sort(gpus_.begin(), gpus_.end(), [](const GpuTiming& a, const GpuTiming& b) { return a.gpu < b.gpu; });
}

const GpuTiming* PhaseClock::slowest_gpu() const {
    const GpuTiming* slowest = nullptr;
    for (const GpuTiming& timing : gpus_)
        if (timing.ready && (!slowest || *timing.ready > *slowest->ready)) slowest = &timing;
    return slowest;
}

}  // namespace provision
