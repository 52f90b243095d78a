#include "validate/worker_outcome.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"

namespace provision {
namespace {

std::string last_line(const std::string& text) {
    std::string line;
    std::size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return line;
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// Why a check has no result, from how the worker ended.
CheckOutcome missing(const GpuChecks& job, const std::string& name, const ChildOutcome& child,
                     const WorkerOutput& output, const WorkerLimits& limits, std::optional<int> killed_for) {
    CheckOutcome outcome{job.gpu, name, CheckStatus::error, 0, 0, 0, 0, {}};
    if (!child.start_error.empty()) {
        outcome.detail = fmt::format("the validation worker could not start: {}", child.start_error);
        return outcome;
    }
    if (child.timed_out && killed_for) {
        outcome.detail = fmt::format("no result: GPU {}, opened by the same worker process, passed its limit, "
                                     "and the process was killed",
                                     *killed_for);
        return outcome;
    }
    if (child.timed_out) {
        outcome.status = CheckStatus::timeout;
        outcome.detail = output.ready ? fmt::format("no result within {:g} s; the worker was killed", limits.work_s)
                                      : fmt::format("no result: the worker was still opening the GPU after {:g} s "
                                                    "(PROVISION_DETECT_TIMEOUT); it was killed",
                                                    limits.open_s);
        return outcome;
    }
    if (child.signal != 0) {
        outcome.detail = fmt::format("the validation worker died of {} without a result", describe_signal(child.signal));
    } else if (output.ready && !output.ready->error.empty()) {
        outcome.detail = fmt::format("the validation worker could not open the GPU: {}", output.ready->error);
        return outcome;
    } else {
        outcome.detail = fmt::format("the validation worker exited with status {} without a result", child.exit_code);
    }
    if (!output.unparsed.empty()) outcome.detail += fmt::format("; it printed {}", quoted(output.unparsed));
    if (const std::string err = last_line(child.err); !err.empty())
        outcome.detail += fmt::format("; stderr: {}", quoted(err));
    return outcome;
}

bool same_uuid(const std::string& a, const std::string& b) { return lowercase(a) == lowercase(b); }

}  // namespace

std::vector<CheckOutcome> outcomes_from_worker(const GpuChecks& job, const ChildOutcome& child,
                                               const WorkerOutput& output, const WorkerLimits& limits,
                                               const std::string& expected_uuid, std::optional<int> killed_for) {
    std::vector<CheckOutcome> outcomes;
    const bool other_gpu = output.ready && !output.ready->uuid.empty() && !expected_uuid.empty() &&
                           !same_uuid(output.ready->uuid, expected_uuid);
    // A GPU with no room for another context (other processes hold it, or
    // its compute mode lets no further process in) could not be measured:
    // that proves nothing of it (docs/DESIGN.md, "What is not measured").
    const bool no_room = output.ready && output.ready->full;
    for (const std::string& name : job.checks) {
        const auto found = output.results.find(name);
        if (no_room) {
            outcomes.push_back({job.gpu, name, CheckStatus::not_measured, 0, 0, 0, 0,
                                fmt::format("not measured: the GPU had no room for another context ({})",
                                            output.ready->error)});
        } else if (other_gpu) {
            outcomes.push_back({job.gpu, name, CheckStatus::error, 0, 0, 0, 0,
                                fmt::format("the validation worker opened GPU {}, not {} (CUDA index {} of the "
                                            "workload): its results do not count",
                                            echoed(output.ready->uuid), expected_uuid, job.gpu)});
        } else if (found == output.results.end()) {
            outcomes.push_back(missing(job, name, child, output, limits, killed_for));
        } else {
            CheckOutcome outcome = found->second;
            outcome.gpu = job.gpu;
            outcomes.push_back(std::move(outcome));
        }
    }
    return outcomes;
}

PairOutcome judge_pair(const std::pair<int, int>& pair, PeerPath path, const PulledWay& forward,
                       const PulledWay& backward, double timeout_s) {
    PairOutcome outcome;
    PeerCopyResult& copy = outcome.copy;
    copy.first = pair.first;
    copy.second = pair.second;
    copy.path = path;
    // "GPU a -> GPU b: ..." for the way that decided.
    const auto way_words = [&](const PulledWay& way, const std::string& detail) {
        const bool is_forward = &way == &forward;
        return fmt::format("GPU {} -> GPU {}: {}", is_forward ? pair.first : pair.second,
                           is_forward ? pair.second : pair.first, detail);
    };
    if (!forward.line || !backward.line) {
        const PulledWay& silent = !forward.line ? forward : backward;
        if (silent.unmeasured) {
            copy.status = PeerCopyStatus::not_measured;
            copy.detail = *silent.unmeasured;
            return outcome;
        }
        copy.status = silent.killed_at_limit ? PeerCopyStatus::timeout : PeerCopyStatus::error;
        copy.detail = silent.killed_at_limit
                          ? fmt::format("the copy to GPU {} did not finish within {:g} s; its worker was killed",
                                        silent.receiver, timeout_s)
                          : fmt::format("the worker of GPU {} ended without an answer", silent.receiver);
        return outcome;
    }
    const PulledLine& there = *forward.line;
    const PulledLine& back = *backward.line;
    if (there.path_failed || back.path_failed) {
        const PulledWay& worse = there.path_failed ? forward : backward;
        copy.status = PeerCopyStatus::error;
        copy.detail = way_words(worse, worse.line->detail);
        outcome.path_failed = path == PeerPath::cumem_fd;
        return outcome;
    }
    copy.gb_per_s_forward = there.gb_per_s;
    copy.gb_per_s_backward = back.gb_per_s;
    if (there.no_peer_access || back.no_peer_access) {
        copy.status = PeerCopyStatus::skipped;
        copy.cuda_peer_access = false;
        copy.detail = there.no_peer_access ? there.detail : back.detail;
        return outcome;
    }
    // The worse way decides: wrong bytes, then an error.
    const PulledWay& worse = there.status != PeerCopyStatus::passed ? forward : backward;
    copy.status = worse.line->status;
    copy.cuda_peer_access = true;
    copy.detail = copy.status == PeerCopyStatus::passed ? there.detail : way_words(worse, worse.line->detail);
    return outcome;
}

}  // namespace provision
