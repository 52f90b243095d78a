#include "validate/worker_outcome.h"

#include <fmt/format.h>

#include <algorithm>

#include "validate/worker_protocol.h"

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
                     const WorkerOutput& output, double timeout_s) {
    CheckOutcome outcome{job.gpu, name, CheckStatus::error, 0, 0, 0, 0, {}};
    if (!child.start_error.empty()) {
        outcome.detail = fmt::format("the validation worker could not start: {}", child.start_error);
        return outcome;
    }
    if (child.timed_out) {
        outcome.status = CheckStatus::timeout;
        outcome.detail = fmt::format("no result within {:g} s; the worker was killed", timeout_s);
        return outcome;
    }
    if (child.signal != 0)
        outcome.detail = fmt::format("the validation worker died of {} without a result", describe_signal(child.signal));
    else
        outcome.detail = fmt::format("the validation worker exited with status {} without a result", child.exit_code);
    if (!output.unparsed.empty()) outcome.detail += fmt::format("; it printed {}", quoted(output.unparsed));
    if (const std::string err = last_line(child.err); !err.empty())
        outcome.detail += fmt::format("; stderr: {}", quoted(err));
    return outcome;
}

}  // namespace

std::vector<CheckOutcome> outcomes_from_worker(const GpuChecks& job, const ChildOutcome& child, double timeout_s) {
    const WorkerOutput output = parse_worker_output(child.out);
    std::vector<CheckOutcome> outcomes;
    for (const std::string& name : job.checks) {
        const auto found = output.results.find(name);
        if (found == output.results.end()) {
            outcomes.push_back(missing(job, name, child, output, timeout_s));
            continue;
        }
        CheckOutcome outcome = found->second;
        outcome.gpu = job.gpu;
        outcomes.push_back(std::move(outcome));
    }
    return outcomes;
}

}  // namespace provision
