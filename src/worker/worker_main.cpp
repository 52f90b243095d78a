// The child's side of validation, the GPU worker process (`provision
// __check-worker`): opens its GPUs, a thread each, and runs the checks its
// parent sends.  A GPU is opened (its CUDA context created, the slowest
// step) at once, while the checks' host halves — random inputs and fp64
// references — are prepared on other threads as soon as the names arrive,
// at the least priority so that they give way to the context's creation;
// the link commands are prepared beside the kernels and finished after them
// (worker_links.h).  What is done to a GPU is its backend's (gpu_backend.h).
#include "worker/worker_main.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <condition_variable>
#include <csignal>
#include <unistd.h>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "core/gpu_worker_name.h"
#include "core/process_clock.h"
#include "kernels/fault_injection.h"
#include "kernels/validation_kernels.h"
#include "worker/background_priority.h"
#include "worker/gpu_backend.h"
#include "worker/worker_links.h"
#include "worker_protocol/worker_protocol.h"

namespace provision {
namespace {

using Clock = std::chrono::steady_clock;

CheckStatus status_of(kernels::CheckStatus status) {
    switch (status) {
        case kernels::CheckStatus::passed: return CheckStatus::passed;
        case kernels::CheckStatus::failed: return CheckStatus::failed;
        case kernels::CheckStatus::unsupported: return CheckStatus::unsupported;
        case kernels::CheckStatus::error: break;
    }
    return CheckStatus::error;
}

// Test-only faults of the worker process itself, with or without the CUDA
// kernels: "crash" dies of SIGSEGV as a fault in the driver would take it
// down, "killed" of SIGKILL as the OOM killer would.  The runner must
// contain both.
// Only the fault build calls it.
[[maybe_unused]] void die_for_fault(const std::string& fault) {
    if (fault == "crash") {
        std::signal(SIGSEGV, SIG_DFL);  // past any handler a sanitizer installed
        std::raise(SIGSEGV);
    }
    if (fault == "killed") std::raise(SIGKILL);
}

// Where a GPU's input lines come from: the worker's stdin, or (a worker of
// several GPUs) the lines its stdin tagged for that GPU.  False at the end.
using LineSource = std::function<bool(std::string&)>;

// The check names up to the empty line that ends them (or the end of input).
std::vector<std::string> read_check_names(const LineSource& next_line) {
    std::vector<std::string> names;
    for (std::string line; next_line(line) && !line.empty();) names.push_back(line);
    return names;
}

struct WorkerSettings {
    int gpu = 0;
    int source = -1;  // the GPU's index as the workload sees it (its links' faults name it)
    std::string mode = "quick";
    std::string fault;
    unsigned seed = 0;
    bool simulate = false;
    std::string cuda_library = "libcuda.so.1";  // the driver a simulated worker opens its GPU through
    std::string timeline;                       // test-only: where each line in and out is logged, timed
};

// The worker's command line, one settings per GPU; nullopt (the error on
// `err`) when it is wrong.
std::optional<std::vector<WorkerSettings>> read_settings(const std::vector<std::string>& args, std::ostream& err) {
    CLI::App app{"provision's validation worker: opens its GPUs and runs the checks named on stdin"};
    WorkerSettings settings;
    std::vector<int> gpus, sources;
    app.add_option("--gpu", gpus, "CUDA index of a GPU (once per GPU)")->required()->take_all();
    app.add_option("--as", sources, "each GPU's index as the workload sees it (default: --gpu)")->take_all();
    app.add_option("--mode", settings.mode, "quick or full")->check(CLI::IsMember({"quick", "full"}));
    if constexpr (kFaultInjection) {
        app.add_option("--fault", settings.fault, "test-only: PATTERN=FAULT[,...]");
        app.add_flag("--simulate", settings.simulate, "test-only: open the GPU through libcuda alone, act the checks out");
        app.add_option("--cuda-library", settings.cuda_library, "test-only: the CUDA driver library --simulate opens");
        app.add_option("--timeline", settings.timeline, "test-only: append each line read and written, timed, here");
    }
    app.add_option("--seed", settings.seed, "seed of the random inputs (0: a fresh one)");
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
        app.parse(reversed);
        if (!sources.empty() && sources.size() != gpus.size())
            throw CLI::ValidationError("--as", "give it once per --gpu, or not at all");
    } catch (const CLI::ParseError& error) {
        err << fmt::format("provision __check-worker: {}\n", error.what());
        return std::nullopt;
    }
    // One fresh seed for the whole run, so that checks of one kind of input
    // (gemm.fp8 and gemm.fp8.wgmma, on every GPU) share their host half.
    while (settings.seed == 0) settings.seed = std::random_device{}();
    std::vector<WorkerSettings> each;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        each.push_back(settings);
        each.back().gpu = gpus[i];
        each.back().source = sources.empty() ? gpus[i] : sources[i];
    }
    return each;
}

using PreparedChecks = std::vector<std::future<std::unique_ptr<kernels::PreparedCheck>>>;

// Each check's host half, started on a thread of its own.
PreparedChecks prepare_host_halves(const std::vector<std::string>& names, const WorkerSettings& settings,
                                   GpuBackend& backend) {
    kernels::CheckOptions base;
    base.seed = settings.seed;
    base.full = parse_validate_mode(settings.mode) == ValidateMode::full;
    PreparedChecks prepared;
    for (const std::string& name : names) {
        kernels::CheckOptions options = base;
        options.fault = fault_for_check(settings.fault, name);
        if (options.fault == "crash" || options.fault == "killed") {
            prepared.push_back({});  // the worker dies before it would run
            continue;
        }
        prepared.push_back(std::async(std::launch::async, [&backend, name, options] {
            lower_this_thread_priority();  // best effort: where refused, it only competes harder
            return backend.prepare_check(name, options);
        }));
    }
    return prepared;
}

// Lines written by the checks and the links' threads alike, whole and
// flushed at once, so that they survive a later kill; a worker of several
// GPUs tags each with its GPU.
class LinePrinter {
public:
    LinePrinter(std::ostream& out, const std::string& timeline) : out_(out) {
        if (!timeline.empty()) timeline_.open(timeline, std::ios::app);
    }
    // GPU `gpu`'s line, tagged with it in a worker of several GPUs.
    void print(const std::string& line, int gpu, bool tagged) {
        std::lock_guard lock(mutex_);
        if (tagged) out_ << gpu << ':';
        out_ << line << '\n' << std::flush;
        log("out", line, gpu);
    }
    // Test-only: the line, when it was read or written, and for which GPU (-1: not known yet).
    void log(const char* way, const std::string& line, int gpu) {
        if (!timeline_.is_open()) return;
        std::lock_guard lock(log_mutex_);
        timeline_ << std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count()
                  << ' ' << getpid() << ' ' << gpu << ' ' << way << ' ' << line << '\n' << std::flush;
    }

private:
    std::ostream& out_;
    std::mutex mutex_;
    std::ofstream timeline_;
    std::mutex log_mutex_;
};

using PrintLine = std::function<void(const std::string&)>;

// One check's device half, its outcome timed; `waited_ms` grows by how long
// it waited for its host half once the GPU was open.
CheckOutcome run_one_check(const std::string& name, std::future<std::unique_ptr<kernels::PreparedCheck>>& prepared,
                           const WorkerSettings& settings, const kernels::OpenedDevice& device, double& waited_ms) {
    if constexpr (kFaultInjection) die_for_fault(fault_for_check(settings.fault, name));
    const Clock::time_point begin = Clock::now();
    kernels::CheckResult result;
    if (!device.ok) {
        result.name = name;
        result.status = kernels::CheckStatus::error;
        result.detail = fmt::format("the GPU could not be opened: {}", device.detail);
    } else {
        auto check = prepared.get();
        waited_ms += std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
        result = check->run(settings.gpu);
    }
    CheckOutcome outcome{settings.gpu, result.name, status_of(result.status), result.max_rel_error,
                         result.tolerance, result.ms, result.tflops, result.detail};
    outcome.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    return outcome;
}

// The device halves; returns how long they waited for their host halves
// once the GPU was open (the references' share of the critical path).  In
// quick mode they run at once, a thread each: small kernels, uploads and
// judgements that leave the GPU mostly idle one after another.  The full
// mode's throughput measurements run one after another, alone on the GPU.
double run_checks(const std::vector<std::string>& names, PreparedChecks& prepared, const WorkerSettings& settings,
                  const kernels::OpenedDevice& device, const PrintLine& printer) {
    std::vector<double> waited(names.size(), 0);
    const bool together = parse_validate_mode(settings.mode) == ValidateMode::quick && device.ok && !settings.simulate;
    if (!together) {
        for (std::size_t i = 0; i < names.size(); ++i)
            printer(format_result_line(run_one_check(names[i], prepared[i], settings, device, waited[i])));
    } else {
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < names.size(); ++i)
            threads.emplace_back([&, i] {
                printer(format_result_line(run_one_check(names[i], prepared[i], settings, device, waited[i])));
            });
        for (auto& thread : threads) thread.join();
    }
    double total = 0;
    for (const double ms : waited) total += ms;
    return total;
}

// One GPU: opened at once, its checks run as their names arrive, then its
// link commands until its input ends.
void serve_gpu(const WorkerSettings& settings, Clock::time_point start, const LineSource& next_line,
               const PrintLine& printer) {
    // The input, read on a thread of its own: the names (each check's host
    // half starts as soon as they arrive, while the GPU is being opened),
    // then the link commands, handed to the links' thread as they come.
    const auto backend = make_gpu_backend(settings.gpu, settings.simulate, settings.cuda_library);
    std::promise<std::pair<std::vector<std::string>, PreparedChecks>> named;
    auto named_future = named.get_future();
    std::promise<WorkerLinks*> links_promise;
    auto links_future = links_promise.get_future().share();
    std::thread reader([&] {
        auto names = read_check_names(next_line);
        auto prepared = prepare_host_halves(names, settings, *backend);
        const bool any = !names.empty();
        named.set_value({std::move(names), std::move(prepared)});
        if (!any) return;
        // The first link command comes with the names: a host link's memory
        // is made now, while the GPU is still being opened.
        std::string first;
        const bool more = next_line(first);
        if (const auto command = more ? parse_link_command(first) : std::nullopt;
            command && command->kind == LinkCommand::Kind::host_link)
            backend->stage_host_link(command->bytes);
        WorkerLinks* links = links_future.get();
        if (more) {
            links->add(first);
            for (std::string line; next_line(line);) links->add(line);
        }
        links->end_of_input();
    });

    const kernels::OpenedDevice device = backend->open();
    WorkerReady ready;
    ready.loaded = process_start();
    ready.at = Clock::now();
    ready.open_ms = std::chrono::duration<double, std::milli>(ready.at - start).count();
    ready.uuid = device.uuid;
    if (device.ok) ready.capability = fmt::format("{}.{}", device.major, device.minor);
    ready.error = device.ok ? std::string() : device.detail;
    ready.full = device.full;
    printer(format_ready_line(ready));

    const WorkerLinkSettings link_settings{settings.source, settings.fault, device.ok ? std::string() : device.detail,
                                           backend.get()};
    WorkerLinks links(link_settings, printer);
    links_promise.set_value(&links);
    auto [names, prepared] = named_future.get();
    if (names.empty()) {
        reader.join();
        links.end_of_input();
        return;  // not needed
    }
    const double waited_ms = run_checks(names, prepared, settings, device, printer);
    links.checks_done();
    links.wait();  // until the parent's input ends
    reader.join();
    // `done` first: the parent moves on at it, and the buffers go with the
    // process anyway.
    printer(format_done_line(Clock::now(), waited_ms));
    backend->release();
    // Test-only: a teardown as slow as a driver's can be (the parent never waits for it).
    if constexpr (kFaultInjection)
        if (fault_for_check(settings.fault, "teardown") == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// The lines one GPU of a worker of several is given, handed over by the
// thread that reads the worker's input.
class LineQueue {
public:
    void push(std::string line) {
        std::lock_guard lock(mutex_);
        if (!ended_) lines_.push_back(std::move(line));
        changed_.notify_all();
    }
    void end() {
        std::lock_guard lock(mutex_);
        ended_ = true;
        changed_.notify_all();
    }
    bool pop(std::string& line) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return !lines_.empty() || ended_; });
        if (lines_.empty()) return false;
        line = std::move(lines_.front());
        lines_.pop_front();
        return true;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> lines_;
    bool ended_ = false;
};

// Several GPUs in one process, a thread each (one process's cuInit and
// contexts cost what one GPU's do when they run at once: docs/DESIGN.md,
// "Validation"), their lines tagged both ways.
void serve_gpus(const std::vector<WorkerSettings>& gpus, Clock::time_point start, std::istream& in, LinePrinter& printer) {
    std::map<int, LineQueue> queues;  // by the GPU's index as the workload sees it
    for (const WorkerSettings& gpu : gpus) queues[gpu.source];
    std::vector<std::thread> threads;
    for (const WorkerSettings& gpu : gpus)
        threads.emplace_back([&, gpu] {
            LineQueue& queue = queues.at(gpu.source);
            serve_gpu(gpu, start, [&queue](std::string& line) { return queue.pop(line); },
                      [&printer, tag = gpu.source](const std::string& line) { printer.print(line, tag, true); });
        });
    for (std::string line; std::getline(in, line);) {
        printer.log("in", line, -1);
        const auto input = parse_tagged_input(line);
        const auto queue = input ? queues.find(input->gpu) : queues.end();
        if (queue == queues.end()) continue;  // no GPU of this worker's: nothing to do with it
        if (input->end) {
            queue->second.end();
        } else {
            queue->second.push(input->text);
        }
    }
    for (auto& [gpu, queue] : queues) queue.end();
    for (auto& thread : threads) thread.join();
}

}  // namespace

int run_check_worker(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
    const Clock::time_point start = Clock::now();
    const auto settings = read_settings(args, err);
    if (!settings) return 2;
    LinePrinter printer(out, settings->front().timeline);
    if (settings->size() > 1) {
        serve_gpus(*settings, start, in, printer);
        return 0;
    }
    const int gpu = settings->front().source;
    serve_gpu(
        settings->front(), start,
        [&in, &printer, gpu](std::string& line) {
            if (!std::getline(in, line)) return false;
            printer.log("in", line, gpu);
            return true;
        },
        [&printer, gpu](const std::string& line) { printer.print(line, gpu, false); });
    return 0;
}

namespace {

// A worker whose provision is gone (SIGKILLed, OOM-killed) would otherwise
// wait on holding its GPU: NCCL's communicator across nodes waits for its
// peers without end.  It follows provision out.  The thread that spawned it
// is provision's main thread, which becomes the workload at the handoff, so
// a handoff keeps it alive; an exit takes it along, its teardown left to the
// kernel as a killed process's is.
void follow_parent_out() {
    const pid_t parent = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) std::_Exit(1);  // gone already, before the line above
}

}  // namespace

int check_worker_main(const std::vector<std::string>& args) {
    follow_parent_out();
    name_this_process_as_gpu_worker();  // so that NVML's process lists can tell it from a workload
    return run_check_worker(args, std::cin, std::cout, std::cerr);
}

}  // namespace provision
