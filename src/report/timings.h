// When each phase of a run ended, in milliseconds since the process started:
// the report's "timings" (docs/DESIGN.md), so a slow start on a user's
// machine can be read from its report.
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

namespace provision {

// In the order a run goes through them.  worker_ready is when the last GPU
// worker given checks had opened its GPU: it overlaps python,
// compiled_code and selection, and may end after them.
enum class Phase { recipes, detection, python, compiled_code, selection, worker_ready, checks, env_file, total };

std::string_view to_string(Phase phase);

struct PhaseTiming {
    Phase phase;
    double ms;  // since the process started
};

// Records phase ends; a phase that did not happen is never marked, so it is
// absent from the report.
class PhaseClock {
public:
    void mark(Phase phase);
    void mark_at(Phase phase, std::chrono::steady_clock::time_point at);
    const std::vector<PhaseTiming>& phases() const { return timings_; }

private:
    std::vector<PhaseTiming> timings_;
};

}  // namespace provision
