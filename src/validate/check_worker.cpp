// The worker process: opens one GPU and runs the checks its parent sends.
// The GPU is opened (its CUDA context created, the slowest step) at once,
// while the checks' host halves — random inputs and fp64 references — are
// prepared on other threads as soon as the names arrive.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <future>
#include <iostream>
#include <thread>

#include "validate/fault_injection.h"
#include "validate/simulated_device.h"
#include "validate/worker_outcome.h"
#include "validate/worker_protocol.h"
#include "validation_kernels.h"

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
void die_for_fault(const std::string& fault) {
    if (fault == "crash") {
        std::signal(SIGSEGV, SIG_DFL);  // past any handler a sanitizer installed
        std::raise(SIGSEGV);
    }
    if (fault == "killed") std::raise(SIGKILL);
}

// The check names up to the empty line that ends them (or the end of input).
std::vector<std::string> read_check_names(std::istream& in) {
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line) && !line.empty();) names.push_back(line);
    return names;
}

struct WorkerSettings {
    int gpu = 0;
    std::string mode = "quick";
    std::string fault;
    unsigned seed = 0;
    bool simulate = false;
};

void print(std::ostream& out, const std::string& line) { out << line << '\n' << std::flush; }  // survives a later kill

}  // namespace

int run_check_worker(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
    const Clock::time_point start = Clock::now();
    CLI::App app{"provision's validation worker: opens one GPU and runs the checks named on stdin"};
    WorkerSettings settings;
    app.add_option("--gpu", settings.gpu, "CUDA index of the GPU")->required();
    app.add_option("--mode", settings.mode, "quick or full")->check(CLI::IsMember({"quick", "full"}));
    if constexpr (kFaultInjection) {
        app.add_option("--fault", settings.fault, "test-only: PATTERN=FAULT[,...]");
        app.add_flag("--simulate", settings.simulate, "test-only: open the GPU through libcuda alone, act the checks out");
    }
    app.add_option("--seed", settings.seed, "seed of the random inputs (0: a fresh one)");
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
        app.parse(reversed);
    } catch (const CLI::ParseError& error) {
        err << fmt::format("provision __check-worker: {}\n", error.what());
        return 2;
    }
    kernels::CheckOptions check_options;
    check_options.seed = settings.seed;
    check_options.full = parse_validate_mode(settings.mode) == ValidateMode::full;

    // The names arrive while the GPU is being opened; each check's host half
    // starts as soon as they do.
    std::promise<std::vector<std::future<std::unique_ptr<kernels::PreparedCheck>>>> prepared_promise;
    auto prepared_future = prepared_promise.get_future();
    std::vector<std::string> names;
    std::thread reader([&] {
        names = read_check_names(in);
        std::vector<std::future<std::unique_ptr<kernels::PreparedCheck>>> prepared;
        for (const std::string& name : names) {
            kernels::CheckOptions options = check_options;
            options.fault = fault_for_check(settings.fault, name);
            if (settings.simulate || options.fault == "crash" || options.fault == "killed") {
                prepared.push_back({});  // nothing to prepare
                continue;
            }
            prepared.push_back(std::async(std::launch::async, [name, options] { return kernels::prepare_check(name, options); }));
        }
        prepared_promise.set_value(std::move(prepared));
    });

    SimulatedDevice simulated;
    const kernels::OpenedDevice device =
        settings.simulate ? simulated.open(settings.gpu) : kernels::open_device(settings.gpu);
    WorkerReady ready;
    ready.at = Clock::now();
    ready.open_ms = std::chrono::duration<double, std::milli>(ready.at - start).count();
    ready.uuid = device.uuid;
    if (device.ok) ready.capability = fmt::format("{}.{}", device.major, device.minor);
    ready.error = device.ok ? std::string() : device.detail;
    print(out, format_ready_line(ready));

    reader.join();
    auto prepared = prepared_future.get();
    // How long the device halves waited for their host halves once the GPU
    // was open: the references' share of the critical path.
    double waited_ms = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string fault = fault_for_check(settings.fault, names[i]);
        die_for_fault(fault);
        kernels::CheckResult result;
        if (!device.ok) {
            result.name = names[i];
            result.status = kernels::CheckStatus::error;
            result.detail = fmt::format("the GPU could not be opened: {}", device.detail);
        } else if (settings.simulate) {
            result = simulated.run(names[i], fault);
        } else {
            const Clock::time_point wait_start = Clock::now();
            auto check = prepared[i].get();
            waited_ms += std::chrono::duration<double, std::milli>(Clock::now() - wait_start).count();
            result = check->run(settings.gpu);
        }
        const CheckOutcome outcome{settings.gpu, result.name, status_of(result.status), result.max_rel_error,
                                   result.tolerance, result.ms, result.tflops, result.detail};
        print(out, format_result_line(outcome));
    }
    if (!names.empty()) print(out, format_done_line(Clock::now(), waited_ms));
    return 0;
}

int check_worker_main(const std::vector<std::string>& args) { return run_check_worker(args, std::cin, std::cout, std::cerr); }

}  // namespace provision
