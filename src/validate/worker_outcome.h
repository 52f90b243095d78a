// From what a worker process did to one outcome per requested check.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validate/child_process.h"
#include "validate/validation.h"
#include "worker_protocol/worker_protocol.h"

namespace provision {

// A GPU that had no room for another context has every check
// "not-measured".  Otherwise a check with a result line keeps it; the others
// are "timeout" when the
// worker was killed at a limit (`limits.open_s` while it was opening its
// GPU, else `limits.work_s`), else "error" saying how the worker ended
// (could not start, could not open its GPU, died of a signal, exited
// without a result, printed something else) with the last line of its
// stderr.  A worker that opened another GPU than `expected_uuid` (when both
// are known) has every check an error that names both.  `killed_for`: the
// GPU whose limit killed the process this GPU's worker shared with it (its
// missing checks are errors that say so, not timeouts).
std::vector<CheckOutcome> outcomes_from_worker(const GpuChecks& job, const ChildOutcome& child,
                                               const WorkerOutput& output, const WorkerLimits& limits,
                                               const std::string& expected_uuid = {},
                                               std::optional<int> killed_for = std::nullopt);


// One way of a pair's copy as its receiving worker ended it: the line it
// printed, or why it has none.
struct PulledWay {
    int receiver = 0;                  // the GPU that pulled
    const PulledLine* line = nullptr;  // null: the worker gave no answer
    bool killed_at_limit = false;      // no answer because its worker passed its own limit
    std::optional<std::string> unmeasured{};  // no answer, and why the copy proves nothing
};

// What a pair's two ways come to.  `path_failed`: the memory could not be
// shared on `path` (the pair is tried again on the other path, where there
// is one), else `copy` is the pair's result.
struct PairOutcome {
    PeerCopyResult copy;
    bool path_failed = false;
};

// Pure: the worse way decides (no answer, then a path that failed, no peer
// access, wrong bytes, an error); `forward` is first -> second.
PairOutcome judge_pair(const std::pair<int, int>& pair, PeerPath path, const PulledWay& forward,
                       const PulledWay& backward, double timeout_s);

}  // namespace provision
