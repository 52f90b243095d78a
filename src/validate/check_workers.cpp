#include <algorithm>

#include "validate/child_process.h"
#include "validate/validation.h"
#include "validate/worker_outcome.h"
#include "validate/worker_protocol.h"

namespace provision {

using Clock = std::chrono::steady_clock;

struct CheckWorkers::Worker {
    WorkerTarget target;
    std::unique_ptr<ChildProcess> process;
    std::vector<std::string> checks;  // what it was given
    Clock::time_point deadline{};
    bool finished = false;
    WorkerOutput output;

    void read() {
        process->read_available();
        output = parse_worker_output(process->out());
    }
};

CheckWorkers::CheckWorkers(ValidationOptions options) : options_(std::move(options)) {}

CheckWorkers::~CheckWorkers() = default;  // each ChildProcess kills what still runs

bool CheckWorkers::any() const { return !workers_.empty(); }

void CheckWorkers::keep(const std::vector<WorkerTarget>& targets) {
    std::erase_if(workers_, [&](const std::unique_ptr<Worker>& worker) {
        return std::none_of(targets.begin(), targets.end(),
                            [&](const WorkerTarget& target) { return target.gpu == worker->target.gpu; });
    });
    for (const WorkerTarget& target : targets) {
        const auto existing = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
            return worker->target.gpu == target.gpu;
        });
        if (existing != workers_.end()) {
            if (!target.uuid.empty()) (*existing)->target.uuid = target.uuid;
            continue;
        }
        auto worker = std::make_unique<Worker>();
        worker->target = target;
        std::vector<std::string> command = {options_.self_exe};
        // A worker that sees only its GPU finds it at CUDA index 0.
        for (auto& arg : worker_arguments(target.visible.empty() ? target.gpu : 0, options_))
            command.push_back(std::move(arg));
        std::map<std::string, std::string> environment;
        if (!target.visible.empty()) environment["CUDA_VISIBLE_DEVICES"] = target.visible;
        worker->process = std::make_unique<ChildProcess>(command, environment);
        workers_.push_back(std::move(worker));
    }
}

std::vector<CheckOutcome> CheckWorkers::run(const std::vector<GpuChecks>& work) {
    std::vector<WorkerTarget> targets;
    for (const GpuChecks& job : work) {
        if (job.checks.empty()) continue;
        const auto existing = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
            return worker->target.gpu == job.gpu;
        });
        targets.push_back(existing != workers_.end() ? (*existing)->target : WorkerTarget{job.gpu, {}, {}});
    }
    keep(targets);

    const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
    for (const GpuChecks& job : work) {
        for (auto& worker : workers_) {
            if (worker->target.gpu != job.gpu || !worker->checks.empty()) continue;
            worker->checks = job.checks;
            if (!worker->process->start_error().empty()) {
                worker->finished = true;
                continue;
            }
            worker->read();
            const Clock::time_point now = Clock::now();
            // Only the worker's own work counts against its limit: opening the
            // GPU (up to its `ready` line, or until now when it has not said
            // it yet) and the checks from now on.
            const Clock::time_point opened = worker->output.ready ? std::min(worker->output.ready->at, now) : now;
            worker->deadline = now + (limit - (opened - worker->process->started_at()));
            worker->process->write_input(format_check_list(job.checks));
        }
    }

    for (;;) {
        std::vector<const ChildProcess*> waiting;
        Clock::time_point next_deadline = Clock::time_point::max();
        for (auto& worker : workers_) {
            if (worker->finished) continue;
            worker->read();
            if (worker->output.done) {
                // Its results are in; the driver tears its context down
                // without provision waiting for it.
                worker->process->let_go();
                worker->process->poll_exit();
                worker->finished = true;
            } else if (worker->process->poll_exit()) {
                worker->read();
                worker->finished = true;
            } else if (Clock::now() >= worker->deadline) {
                worker->process->kill(true);
                worker->read();
                worker->finished = true;
            } else {
                waiting.push_back(worker->process.get());
                next_deadline = std::min(next_deadline, worker->deadline);
            }
        }
        if (waiting.empty()) break;
        const auto until_deadline =
            std::chrono::ceil<std::chrono::milliseconds>(next_deadline - Clock::now()).count();
        wait_for_output(waiting, std::chrono::milliseconds(std::clamp<long long>(until_deadline, 1, 50)));
    }

    std::vector<CheckOutcome> outcomes;
    for (const GpuChecks& job : work) {
        const auto worker = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& w) {
            return w->target.gpu == job.gpu;
        });
        if (worker == workers_.end()) continue;  // no checks
        for (auto& outcome : outcomes_from_worker(job, (*worker)->process->outcome(), (*worker)->output,
                                                  options_.timeout_s, (*worker)->target.uuid))
            outcomes.push_back(std::move(outcome));
    }
    return outcomes;
}

std::optional<Clock::time_point> CheckWorkers::ready_at() const {
    std::optional<Clock::time_point> last;
    for (const auto& worker : workers_)
        if (!worker->checks.empty() && worker->output.ready && worker->output.ready->error.empty())
            last = std::max(last.value_or(worker->output.ready->at), worker->output.ready->at);
    return last;
}

std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options) {
    CheckWorkers workers(options);
    return workers.run(work);
}

}  // namespace provision
