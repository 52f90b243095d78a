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
                     const WorkerOutput& output, double timeout_s, std::optional<int> killed_for) {
    CheckOutcome outcome{job.gpu, name, CheckStatus::error, 0, 0, 0, 0, {}};
    if (!child.start_error.empty()) {
        outcome.detail = fmt::format("the validation worker could not start: {}", child.start_error);
        return outcome;
    }
    if (child.timed_out && killed_for) {
        outcome.detail = fmt::format("no result: GPU {}, opened by the same worker process, had none within {:g} s, "
                                     "and the process was killed",
                                     *killed_for, timeout_s);
        return outcome;
    }
    if (child.timed_out) {
        outcome.status = CheckStatus::timeout;
        outcome.detail = fmt::format("no result within {:g} s{}; the worker was killed", timeout_s,
                                     output.ready ? "" : " (it was still opening the GPU)");
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
                                               const WorkerOutput& output, double timeout_s,
                                               const std::string& expected_uuid, std::optional<int> killed_for) {
    std::vector<CheckOutcome> outcomes;
    const bool other_gpu = output.ready && !output.ready->uuid.empty() && !expected_uuid.empty() &&
                           !same_uuid(output.ready->uuid, expected_uuid);
    for (const std::string& name : job.checks) {
        const auto found = output.results.find(name);
        if (other_gpu) {
            outcomes.push_back({job.gpu, name, CheckStatus::error, 0, 0, 0, 0,
                                fmt::format("the validation worker opened GPU {}, not {} (CUDA index {} of the "
                                            "workload): its results do not count",
                                            echoed(output.ready->uuid), expected_uuid, job.gpu)});
        } else if (found == output.results.end()) {
            outcomes.push_back(missing(job, name, child, output, timeout_s, killed_for));
        } else {
            CheckOutcome outcome = found->second;
            outcome.gpu = job.gpu;
            outcomes.push_back(std::move(outcome));
        }
    }
    return outcomes;
}

}  // namespace provision
