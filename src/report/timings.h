// When each phase of a run ended, in milliseconds since the process started:
// the report's "timings" (docs/DESIGN.md), so a slow start on a user's
// machine can be read from its report.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

namespace provision {

// In the order a run goes through them.  worker_ready is when the last GPU
// worker given checks had opened its GPU: it overlaps python,
// compiled_code and selection, and may end after them.  network (the
// network between nodes, judged once detection is done) and fabric
// (multi-node NVLink's cliques and IMEX channels) are marked only where
// their stage ran.
enum class Phase {
    recipes, detection, network, fabric, python, compiled_code, selection, worker_ready, checks, env_file, total
};

std::string_view to_string(Phase phase);

struct PhaseTiming {
    Phase phase;
    double ms;  // since the process started
};

// One GPU worker's life, in ms since the process started: when it was
// started, when its program was running, when it had opened its GPU, when
// it said it was done.  A moment
// it never reached is absent.
struct GpuTiming {
    int gpu = 0;  // as the workload sees it
    double started = 0;
    std::optional<double> running;  // its program loaded (the exec's cost is running - started)
    std::optional<double> ready;
    std::optional<double> done;
};

// Records phase ends; a phase that did not happen is never marked, so it is
// absent from the report.
class PhaseClock {
public:
    void mark(Phase phase);
    void mark_at(Phase phase, std::chrono::steady_clock::time_point at);
    const std::vector<PhaseTiming>& phases() const { return timings_; }

    using TimePoint = std::chrono::steady_clock::time_point;
    void mark_gpu(int gpu, TimePoint started, std::optional<TimePoint> running, std::optional<TimePoint> ready,
                  std::optional<TimePoint> done);
    const std::vector<GpuTiming>& gpus() const { return gpus_; }
    // The GPU whose worker was ready last (the one a slow start waited for).
    const GpuTiming* slowest_gpu() const;

private:
    std::vector<PhaseTiming> timings_;
    std::vector<GpuTiming> gpus_;  // in the order of the GPUs
};

}  // namespace provision
