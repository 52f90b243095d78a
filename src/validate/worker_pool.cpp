// The parent's side of validation: the pool of GPU worker processes
// (validation.h's WorkerPool), each fed its commands and read line by line.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "validate/child_process.h"
#include "validate/link_rounds.h"
#include "validate/validation.h"
#include "validate/worker_outcome.h"
#include "worker_protocol/worker_protocol.h"

namespace provision {

using Clock = std::chrono::steady_clock;

namespace {
Clock::duration limit_of(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
}  // namespace

// One worker process: a GPU's alone, or several GPUs' (a thread each, its
// lines tagged with the GPU: worker_protocol.h).
struct WorkerPool::Process {
    std::unique_ptr<ChildProcess> child;
    bool tagged = false;
};

// One GPU's worker: its share of a process.
struct WorkerPool::Worker {
    WorkerTarget target;
    std::shared_ptr<Process> host;
    std::vector<std::string> checks;  // what it was given
    Clock::time_point work_deadline{};  // its latest work's limit, from when that work was given
    bool ended = false;               // exited, killed, or let go after `done`
    bool input_ended = false;
    std::optional<int> killed_for;    // the GPU whose limit killed the process it shared
    WorkerOutput output;

    ChildProcess& process() const { return *host->child; }
    void parse() { output = parse_worker_output(host->tagged ? lines_tagged(target.gpu, process().out()) : process().out()); }
    void read() {
        process().read_available();
        parse();
    }
    bool alive() const { return !ended && process().running(); }
    void write(const std::string& text) { process().write_input(host->tagged ? tag_lines(target.gpu, text) : text); }
    void end_input() {
        if (input_ended) return;
        input_ended = true;
        if (host->tagged) {
            process().write_input(format_end_of_input(target.gpu));
        } else {
            process().close_input();
        }
    }
    // Killed at its own limit, not a GPU's it shared its process with.
    bool killed_at_limit() const { return process().outcome().timed_out && !killed_for; }
    // Work from now on has `limit` to be done, counted from now.
    void give_work(Clock::duration limit) { work_deadline = std::max(work_deadline, Clock::now() + limit); }
    // Each limit counts from the start of what it limits: opening the GPU
    // from the process's start, until its `ready` line; the work from when
    // it was given, or from `ready` when it was given before the GPU was
    // open.  So a machine slow to open GPUs (many workers on few cores, a
    // sanitizer build) cuts no check that had not started.
    Clock::time_point deadline(const WorkerLimits& limits) const {
        if (!output.ready) return process().started_at() + limit_of(limits.open_s);
        return std::max(work_deadline, output.ready->at + limit_of(limits.work_s));
    }
    // The one rule of what is measured: nothing that needs this GPU is, once
    // its worker could not open it or had stopped (killed at a limit, with a
    // mate whose limit passed, or ended).  Every stage goes through it: the
    // pairs, the host memory, the all-reduce's ranks; the checks go through
    // outcomes_from_worker.  Empty: it can be measured.
    std::optional<std::string> unmeasured() const {
        if (output.ready && !output.ready->error.empty())
            return fmt::format("GPU {} could not be opened: {}", target.gpu, output.ready->error);
        if (alive()) return std::nullopt;
        if (killed_for)
            return fmt::format("the worker of GPU {} had stopped: its process was killed when GPU {}, which it shared, "
                               "passed its limit",
                               target.gpu, *killed_for);
        return fmt::format("the worker of GPU {} had stopped", target.gpu);
    }
};

namespace {

bool checks_answered(const WorkerOutput& output, const std::vector<std::string>& checks) {
    return std::all_of(checks.begin(), checks.end(), [&](const std::string& name) { return output.results.count(name); });
}

}  // namespace

std::vector<std::vector<WorkerTarget>> worker_processes_for(const std::vector<WorkerTarget>& targets, int processes) {
    // Targets that name their GPU by CUDA_VISIBLE_DEVICES and those found by
    // provision's own are never in one process: one environment each.
    std::vector<std::vector<WorkerTarget>> layout;
    for (const bool named : {true, false}) {
        std::vector<WorkerTarget> kind;
        for (const WorkerTarget& target : targets)
            if (target.visible.empty() != named) kind.push_back(target);
        const std::size_t count = std::min(kind.size(), static_cast<std::size_t>(std::max(processes, 1)));
        std::size_t next = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t size = kind.size() / count + (i < kind.size() % count ? 1 : 0);
            layout.emplace_back(kind.begin() + static_cast<std::ptrdiff_t>(next),
                                kind.begin() + static_cast<std::ptrdiff_t>(next + size));
            next += size;
        }
    }
    return layout;
}

WorkerPool::WorkerPool(ValidationOptions options) : options_(std::move(options)) {}

WorkerPool::~WorkerPool() {
    for (auto& worker : workers_) worker->end_input();  // each ChildProcess then kills what still runs
}

bool WorkerPool::any() const { return !workers_.empty(); }

WorkerPool::Worker* WorkerPool::worker_of(int gpu) const {
    for (const auto& worker : workers_)
        if (worker->target.gpu == gpu) return worker.get();
    return nullptr;
}

void WorkerPool::keep(const std::vector<WorkerTarget>& targets) {
    // A worker not needed is told so (it leaves its GPU at once); a process
    // none of whose GPUs is needed is killed with its last worker.
    std::erase_if(workers_, [&](const std::unique_ptr<Worker>& worker) {
        const bool needed = std::any_of(targets.begin(), targets.end(),
                                        [&](const WorkerTarget& target) { return target.gpu == worker->target.gpu; });
        if (!needed) worker->end_input();
        return !needed;
    });
    std::vector<WorkerTarget> starting;
    for (const WorkerTarget& target : targets) {
        if (Worker* existing = worker_of(target.gpu)) {
            if (!target.uuid.empty()) existing->target.uuid = target.uuid;
        } else {
            starting.push_back(target);
        }
    }
    for (const std::vector<WorkerTarget>& members : worker_processes_for(starting, options_.worker_processes)) {
        auto host = std::make_shared<Process>();
        host->tagged = members.size() > 1;
        std::vector<WorkerGpu> gpus;
        std::string visible;
        for (const WorkerTarget& target : members) {
            // A worker that sees only its GPUs finds them at CUDA index 0, 1, ...
            gpus.push_back({target.visible.empty() ? target.gpu : static_cast<int>(gpus.size()), target.gpu});
            visible += (visible.empty() ? "" : ",") + target.visible;
        }
        std::vector<std::string> command = {options_.self_exe};
        const WorkerCommand run_with{options_.mode, options_.fault, options_.simulate, options_.cuda_library,
                                     options_.timeline};
        for (auto& arg : worker_arguments(gpus, run_with)) command.push_back(std::move(arg));
        std::map<std::string, std::string> environment;
        if (!visible.empty()) environment["CUDA_VISIBLE_DEVICES"] = visible;
        host->child = std::make_unique<ChildProcess>(command, environment);
        for (const WorkerTarget& target : members) {
            auto worker = std::make_unique<Worker>();
            worker->target = target;
            worker->host = host;
            workers_.push_back(std::move(worker));
        }
    }
}

void WorkerPool::let_go(Worker& done) {
    done.ended = true;
    // The process tears its contexts down without provision once every GPU
    // of it has said `done`.
    const bool all_done = std::all_of(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
        return worker->host != done.host || worker->output.done;
    });
    if (all_done) done.process().let_go();
    done.process().poll_exit();
}

void WorkerPool::kill_at_limit(Worker& late) {
    late.process().kill(true);
    for (auto& worker : workers_)
        if (worker->host == late.host && worker.get() != &late && !worker->ended) worker->killed_for = late.target.gpu;
}

template <typename Complete>
void WorkerPool::wait_for(const std::vector<Worker*>& waiting, Complete complete) {
    for (;;) {
        std::vector<const ChildProcess*> running;
        Clock::time_point next_deadline = Clock::time_point::max();
        // Every process's output first, then each worker's lines: GPUs of one
        // process share its pipe, so a read for one takes in the lines of the
        // others, which must not then wait for a poll that has nothing left
        // to wake it.
        for (Worker* worker : waiting)
            if (!worker->ended) worker->process().read_available();
        for (Worker* worker : waiting)
            if (!worker->ended) worker->parse();
        for (Worker* worker : waiting) {
            if (worker->ended) continue;
            if (worker->output.done) {
                // Its results are in; the driver tears its context down
                // without provision waiting for it.
                let_go(*worker);
            } else if (complete(*worker)) {
                continue;
            } else if (worker->process().poll_exit()) {
                worker->read();
                worker->ended = true;
            } else if (Clock::now() >= worker->deadline(limits())) {
                kill_at_limit(*worker);
                worker->read();
                worker->ended = true;
            } else {
                running.push_back(&worker->process());
                next_deadline = std::min(next_deadline, worker->deadline(limits()));
            }
        }
        if (running.empty()) return;
        const auto until_deadline = std::chrono::ceil<std::chrono::milliseconds>(next_deadline - Clock::now()).count();
        wait_for_output(running, std::chrono::milliseconds(std::clamp<long long>(until_deadline, 1, 50)));
    }
}

ValidationRun WorkerPool::run(const std::vector<GpuChecks>& work, const LinkWork& links) {
    std::vector<WorkerTarget> targets;
    for (const GpuChecks& job : work) {
        if (job.checks.empty()) continue;
        const Worker* existing = worker_of(job.gpu);
        targets.push_back(existing ? existing->target : WorkerTarget{job.gpu, {}, {}});
    }
    keep(targets);

    // Links only between GPUs whose workers run anyway.
    std::vector<GpuIndexPair> pairs;
    for (const auto& [a, b] : links.peer_pairs)
        if (worker_of(a) && worker_of(b)) pairs.push_back({a, b});
    const auto exporting = [&](int gpu) {
        return std::any_of(pairs.begin(), pairs.end(), [&](const GpuIndexPair& p) { return p.first == gpu || p.second == gpu; });
    };

    const Clock::duration limit = limit_of(options_.timeout_s);
    std::vector<Worker*> started;
    for (const GpuChecks& job : work) {
        Worker* worker = job.checks.empty() ? nullptr : worker_of(job.gpu);
        if (!worker || !worker->checks.empty()) continue;
        worker->checks = job.checks;
        if (!worker->process().start_error().empty()) {
            worker->ended = true;
            continue;
        }
        worker->read();
        worker->give_work(limit);
        std::string input = format_check_list(job.checks);
        if (links.host_links) input += format_host_link_command(links.host_bytes, links.repeats);
        if (links.host_memory) input += format_host_memory_command();
        if (links.fabric_handles) input += format_fabric_handle_command();
        if (exporting(job.gpu)) input += format_export_command(job.gpu, links.peer_bytes, links.peer_path);
        worker->write(input);
        // Nothing more to say: it ends after these.
        if (!exporting(job.gpu) && links.nccl_library.empty()) worker->end_input();
        started.push_back(worker);
    }
    // A worker has done its own part when its checks and host measurements
    // are in; the pairs come on top.
    const auto checked = [&](const Worker& worker) {
        return checks_answered(worker.output, worker.checks) && (!links.host_links || worker.output.host_link) &&
               (!links.host_memory || worker.output.host_memory) &&
               (!links.fabric_handles || worker.output.fabric_handle);
    };
    // The exports come right after each worker has opened its GPU, long
    // before its checks end: the first round of pairs starts then.
    wait_for(started, [&](const Worker& worker) {
        return !exporting(worker.target.gpu) || worker.output.exported.count(links.peer_path);
    });

    ValidationRun result;
    std::vector<GpuIndexPair> failed = copy_between_peers(pairs, links.peer_path, links, started, checked, result);
    if (!failed.empty()) {
        // The path NCCL takes failed for these pairs: does the one it
        // would take with NCCL_CUMEM_ENABLE=0 work?
        std::map<GpuIndexPair, PeerCopyResult> first_try;
        for (const GpuIndexPair& pair : failed) first_try[pair] = failed_results_.at(pair);
        export_on(PeerPath::legacy_ipc, failed, links);
        copy_between_peers(failed, PeerPath::legacy_ipc, links, {}, checked, result);  // its failures are final
        for (auto& copy : result.peer_copies) {
            const auto it = first_try.find({copy.first, copy.second});
            if (it == first_try.end()) continue;
            copy.failed_path = links.peer_path;
            copy.failed_path_detail = it->second.detail;
        }
    }
    failed_results_.clear();
    wait_for(started, checked);  // workers without pairs, or whose pairs could not start
    if (!links.nccl_library.empty()) result.nccl_all_reduce = all_reduce(links);

    for (const GpuChecks& job : work) {
        const Worker* worker = job.checks.empty() ? nullptr : worker_of(job.gpu);
        if (!worker) continue;
        for (auto& outcome : outcomes_from_worker(job, worker->process().outcome(), worker->output, limits(),
                                                  worker->target.uuid, worker->killed_for))
            result.checks.push_back(std::move(outcome));
        if (links.host_links && worker->output.host_link && worker->output.host_link->ok) {
            const HostLinkLine& line = *worker->output.host_link;
            result.host_copies.push_back({job.gpu, line.h2d_gb_per_s, line.d2h_gb_per_s, line.link});
        }
        if (worker->output.ready && worker->output.ready->full) result.full_gpus.push_back(job.gpu);
        if (links.host_memory) {
            const auto& line = worker->output.host_memory;
            const bool opened = worker->output.ready && worker->output.ready->error.empty();
            if (const auto why = worker->unmeasured(); why && (!opened || !line)) {
                result.host_memory.push_back({job.gpu, false, -1, *why, false});
            } else {
                result.host_memory.push_back({job.gpu, line && line->ok, line ? line->numa_node : -1,
                                              line ? line->detail : std::string("the worker ended without an answer")});
            }
        }
        if (links.fabric_handles) {
            const auto& line = worker->output.fabric_handle;
            const bool opened = worker->output.ready && worker->output.ready->error.empty();
            if (const auto why = worker->unmeasured(); why && (!opened || !line))
                result.fabric_handles.push_back({job.gpu, FabricHandleStatus::not_measured, 0, *why});
            else if (!line)
                result.fabric_handles.push_back(
                    {job.gpu, FabricHandleStatus::not_measured, 0, "the worker ended without an answer"});
            else
                result.fabric_handles.push_back({job.gpu, line->status, line->cuda_error, line->detail});
        }
    }
    let_go_at_done();
    return result;
}

void WorkerPool::let_go_at_done() {
    // Each worker has been told all it will be told: it says `done` and is let
    // go then, to tear its context down on its own.  Waiting for that line,
    // never for the exit, decides every worker's fate here: none is left for
    // the destructor to kill or spare depending on when its line arrived.
    std::vector<Worker*> finishing;
    for (auto& worker : workers_) {
        worker->end_input();
        if (worker->ended) continue;
        worker->give_work(limit_of(options_.timeout_s));
        finishing.push_back(worker.get());
    }
    wait_for(finishing, [](const Worker&) { return false; });
}

std::optional<NcclAllReduceResult> WorkerPool::all_reduce(const LinkWork& links) {
    std::vector<Worker*> ranks;
    std::string no_rank_why;
    for (auto& worker : workers_) {
        if (worker->checks.empty()) continue;
        if (const auto why = worker->unmeasured()) {
            if (no_rank_why.empty()) no_rank_why = *why;
            continue;
        }
        ranks.push_back(worker.get());
    }
    std::sort(ranks.begin(), ranks.end(), [](const Worker* a, const Worker* b) { return a->target.gpu < b->target.gpu; });
    NodeMeeting* nodes = links.nodes;
    // Across nodes, a node with no rank to offer still comes and says so:
    // the others neither wait for it nor count it.
    if (!nodes && ranks.size() < 2) return std::nullopt;
    const Clock::duration limit = limit_of(options_.timeout_s);
    NcclAllReduceResult result;
    result.ranks = static_cast<int>(ranks.size());
    // The first rank's worker makes the communicator's id (across nodes: node
    // 0's, once every node has come); every rank joins with it.
    Worker* first = ranks.empty() ? nullptr : ranks.front();
    const MakeNcclId make_id = [&](std::string& why) -> std::optional<std::string> {
        if (!first) {
            why = fmt::format("this node has no GPU to make it with ({})", no_rank_why.empty() ? "none" : no_rank_why);
            return std::nullopt;
        }
        first->give_work(limit);
        first->write(format_nccl_id_command(links.nccl_library));
        wait_for({first}, [](const Worker& worker) { return worker.output.nccl_id.has_value(); });
        if (first->output.nccl_id && first->output.nccl_id->ok) return first->output.nccl_id->id;
        why = first->output.nccl_id ? "no communicator id: " + first->output.nccl_id->detail
                                    : fmt::format("the worker of GPU {} ended without a communicator id",
                                                  first->target.gpu);
        return std::nullopt;
    };
    JobRanks job{{}, result.ranks, 0, 1};
    std::string why;
    if (nodes) {
        const auto met = nodes->meet(result.ranks, make_id, why);
        if (!met) {
            result.status = PeerCopyStatus::not_measured;
            result.detail = why;
            return result;
        }
        job = *met;
        if (ranks.empty()) {
            result.status = PeerCopyStatus::not_measured;
            result.detail = fmt::format("no GPU of this node could take part: {}",
                                        no_rank_why.empty() ? "none runs checks" : no_rank_why);
            result.ranks = job.ranks;
            result.nodes = job.nodes;
            nodes->proof_limit(job.ranks, links.nccl_bytes, links.nccl_repeats);  // how long the others may take
            nodes->settle(result);
            return result;
        }
    } else if (auto id = make_id(why)) {
        job.id = std::move(*id);
    } else {
        result.status = PeerCopyStatus::error;
        result.detail = why;
        return result;
    }
    result.ranks = job.ranks;
    result.nodes = job.nodes;
    // Across nodes the communicator and the all-reduce have a limit of their
    // own, from the job's size: the per-check limit is a one-node figure.
    const Clock::duration proof_limit =
        nodes ? Clock::duration(nodes->proof_limit(job.ranks, links.nccl_bytes, links.nccl_repeats)) : limit;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        ranks[rank]->give_work(proof_limit);
        ranks[rank]->write(format_nccl_all_reduce_command(job.ranks, job.first_rank + static_cast<int>(rank),
                                                          links.nccl_bytes, links.nccl_repeats, job.id,
                                                          links.nccl_library));
    }
    // A node lost meanwhile (vanished, failed) leaves this node's ranks
    // waiting for it in vain: they stop at once instead of at the limit.
    std::optional<std::string> lost;
    wait_for(ranks, [&](const Worker& worker) {
        if (worker.output.nccl) return true;
        if (nodes && !lost) lost = nodes->lost();
        return lost.has_value();
    });
    result.status = PeerCopyStatus::passed;
    for (Worker* worker : ranks) {
        const auto& line = worker->output.nccl;
        if (!line && lost) {
            if (!worker->ended) {
                kill_at_limit(*worker);
                worker->read();
                worker->ended = true;
            }
            result.status = PeerCopyStatus::not_measured;
            result.detail = fmt::format("stopped waiting: {}", *lost);
            break;
        }
        if (!line) {
            const bool killed = worker->killed_at_limit();
            result.status = killed ? PeerCopyStatus::timeout : PeerCopyStatus::error;
            result.detail = killed ? fmt::format("GPU {}'s rank did not finish within {:g} s; its worker was killed",
                                                 worker->target.gpu,
                                                 std::chrono::duration<double>(proof_limit).count())
                                   : fmt::format("GPU {}'s worker ended without an answer", worker->target.gpu);
            break;
        }
        if (!line->ok) {
            result.status = line->ms > 0 ? PeerCopyStatus::wrong_bytes : PeerCopyStatus::error;
            result.detail = fmt::format("GPU {}: {}", worker->target.gpu, line->detail);
            break;
        }
        result.init_ms = std::max(result.init_ms, line->init_ms);
        if (line->ms >= result.ms) {
            result.ms = line->ms;
            result.bus_gb_per_s = line->bus_gb_per_s;
            result.detail = line->detail;
        }
        if (result.transport.empty()) result.transport = line->transport;
    }
    if (result.status != PeerCopyStatus::passed) {
        // One rank's failure decides; what the others measured is not kept.
        result.ms = 0;
        result.bus_gb_per_s = 0;
    }
    if (nodes) nodes->settle(result);
    return result;
}

void WorkerPool::export_on(PeerPath path, const std::vector<GpuIndexPair>& pairs, const LinkWork& links) {
    std::vector<Worker*> asked;
    for (const auto& [a, b] : pairs)
        for (const int gpu : {a, b}) {
            Worker* worker = worker_of(gpu);
            if (!worker->alive() || worker->output.exported.count(path) ||
                std::find(asked.begin(), asked.end(), worker) != asked.end())
                continue;
            worker->give_work(limit_of(options_.timeout_s));
            worker->write(format_export_command(gpu, links.peer_bytes, path));
            asked.push_back(worker);
        }
    wait_for(asked, [&](const Worker& worker) { return worker.output.exported.count(path) > 0; });
}

std::vector<GpuIndexPair> WorkerPool::send_round(const std::vector<GpuIndexPair>& round, PeerPath path,
                                                  const LinkWork& links, const std::function<void(PairOutcome)>& record) {
    const Clock::duration limit = limit_of(options_.timeout_s);
    std::vector<GpuIndexPair> sent;
    for (const GpuIndexPair& pair : round) {
        Worker* first = worker_of(pair.first);
        Worker* second = worker_of(pair.second);
        std::string why;
        bool measured = true, export_failed = false;
        for (const Worker* worker : {first, second}) {
            if (!why.empty()) break;
            const auto exported = worker->output.exported.find(path);
            if (const auto unmeasured = worker->unmeasured()) {
                why = *unmeasured;
                measured = false;
            } else if (exported == worker->output.exported.end() || !exported->second.ok) {
                export_failed = exported != worker->output.exported.end();
                why = fmt::format("GPU {} could not export its buffer: {}", worker->target.gpu,
                                  export_failed ? exported->second.detail : std::string("no answer"));
            }
        }
        if (!why.empty()) {
            // An export that failed is the path's failure (cuMem refused,
            // legacy IPC unsupported); a GPU not measured proves nothing.
            PairOutcome unsent;
            unsent.copy.first = pair.first;
            unsent.copy.second = pair.second;
            unsent.copy.status = measured ? PeerCopyStatus::error : PeerCopyStatus::not_measured;
            unsent.copy.detail = why;
            unsent.copy.path = path;
            unsent.path_failed = export_failed && path == PeerPath::cumem_fd;
            record(std::move(unsent));
            continue;
        }
        // Each pulls the other's buffer: both ways at once.
        for (auto [to, from] : {std::pair{second, first}, std::pair{first, second}}) {
            to->give_work(limit);
            to->write(format_pull_command(from->target.gpu, links.peer_bytes, links.repeats, path,
                                          from->output.exported.at(path).handle));
        }
        sent.push_back(pair);
    }
    return sent;
}

PulledWay WorkerPool::pulled_way(int receiver, int source, PeerPath path) const {
    const Worker* worker = worker_of(receiver);
    const auto found = worker->output.pulled.find({source, path});
    PulledWay way{receiver, found == worker->output.pulled.end() ? nullptr : &found->second, worker->killed_at_limit()};
    // Killed with a mate whose limit passed: the copy was not what stopped it.
    if (!way.line && worker->killed_for) way.unmeasured = worker->unmeasured();
    return way;
}

template <typename Checked>
std::vector<GpuIndexPair> WorkerPool::copy_between_peers(const std::vector<GpuIndexPair>& pairs, PeerPath path,
                                                           const LinkWork& links, const std::vector<Worker*>& started,
                                                           Checked checked, ValidationRun& run) {
    std::vector<GpuIndexPair> path_failed;
    const auto record = [&](PairOutcome outcome) {
        const GpuIndexPair pair{outcome.copy.first, outcome.copy.second};
        if (outcome.path_failed) {
            failed_results_[pair] = std::move(outcome.copy);
            path_failed.push_back(pair);
        } else {
            run.peer_copies.push_back(std::move(outcome.copy));
        }
    };
    const auto rounds = link_rounds(pairs);
    for (std::size_t round_index = 0; round_index < rounds.size(); ++round_index) {
        const std::vector<GpuIndexPair> sent = send_round(rounds[round_index], path, links, record);

        // Wait for both ways of every pair sent.  The first round's pulls
        // were sent while the checks may still run: every started worker is
        // waited for, each for its own part too.
        std::vector<Worker*> waiting;
        for (const auto& [a, b] : sent)
            for (const int gpu : {a, b}) waiting.push_back(worker_of(gpu));
        if (round_index == 0)
            for (Worker* worker : started)
                if (std::find(waiting.begin(), waiting.end(), worker) == waiting.end()) waiting.push_back(worker);
        const auto pulled_round = [&](const Worker& worker) {
            return std::all_of(sent.begin(), sent.end(), [&](const GpuIndexPair& pair) {
                const int from = pair.first == worker.target.gpu ? pair.second
                                 : pair.second == worker.target.gpu ? pair.first
                                                                    : -1;
                return from < 0 || worker.output.pulled.count({from, path});
            });
        };
        wait_for(waiting, [&](const Worker& worker) {
            return pulled_round(worker) && (round_index != 0 || checked(worker));
        });

        for (const GpuIndexPair& pair : sent)
            record(judge_pair(pair, path, pulled_way(pair.second, pair.first, path),
                              pulled_way(pair.first, pair.second, path), options_.timeout_s));
    }
    if (rounds.empty()) wait_for(started, checked);
    return path_failed;
}

std::optional<Clock::time_point> WorkerPool::ready_at() const {
    std::optional<Clock::time_point> last;
    for (const auto& worker : workers_)
        if (!worker->checks.empty() && worker->output.ready && worker->output.ready->error.empty())
            last = std::max(last.value_or(worker->output.ready->at), worker->output.ready->at);
    return last;
}

std::vector<WorkerPool::Times> WorkerPool::times() const {
    std::vector<Times> times;
    for (const auto& worker : workers_) {
        if (worker->checks.empty()) continue;
        Times entry{worker->target.gpu, worker->process().started_at(), {}, {}, worker->output.done};
        if (worker->output.ready && worker->output.ready->loaded.time_since_epoch().count() > 0)
            entry.running = worker->output.ready->loaded;
        if (worker->output.ready && worker->output.ready->error.empty()) entry.ready = worker->output.ready->at;
        times.push_back(entry);
    }
    return times;
}

std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options) {
    WorkerPool workers(options);
    return workers.run(work).checks;
}

}  // namespace provision
