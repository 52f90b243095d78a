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

#include "core/gpu_worker_name.h"
#include "gpu/pcie_sysfs.h"
#include "link_checks.h"
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
    int source = -1;  // the GPU's index as the workload sees it (its links' faults name it)
    std::string mode = "quick";
    std::string fault;
    unsigned seed = 0;
    bool simulate = false;
};

void print(std::ostream& out, const std::string& line) { out << line << '\n' << std::flush; }  // survives a later kill

// The fault planted in a link command: a pull's pair's own ("link.0-1"),
// else all pulls' ("link"); the host link's ("host-link").  Exports have none.
std::string link_fault(const std::string& spec, const LinkCommand& command, int own_gpu) {
    if (command.kind == LinkCommand::Kind::host_link) return fault_for_check(spec, "host-link");
    if (command.kind == LinkCommand::Kind::export_buffer) return {};
    const int a = std::min(command.gpu, own_gpu), b = std::max(command.gpu, own_gpu);
    if (auto fault = fault_for_check(spec, "link." + std::to_string(a) + "-" + std::to_string(b)); !fault.empty())
        return fault;
    return fault_for_check(spec, "link");
}

// A link command on the real GPU, through the kernels.
std::string run_link_command(const LinkCommand& command, int device, const std::string& bus_id,
                             const std::string& fault) {
    switch (command.kind) {
        case LinkCommand::Kind::host_link: {
            const auto measure = kernels::measure_host_link(device, command.bytes, command.repeats);
            HostLinkLine line{measure.ok, measure.h2d_gb_per_s, measure.d2h_gb_per_s, {}, measure.detail};
            if (measure.ok) line.link = read_pcie_link(bus_id);  // while the link is still busy
            return format_host_link_line(line);
        }
        case LinkCommand::Kind::export_buffer: {
            const auto exported = kernels::export_peer_buffer(device, command.gpu, command.bytes);
            return format_exported_line({exported.ok, exported.handle, exported.detail});
        }
        case LinkCommand::Kind::pull: {
            const auto pull =
                kernels::pull_peer_buffer(device, command.handle, command.gpu, command.bytes, command.repeats, fault);
            PulledLine line;
            line.from = command.gpu;
            line.gb_per_s = pull.gb_per_s;
            line.detail = pull.detail;
            switch (pull.status) {
                case kernels::PeerPullStatus::passed: line.status = PeerCopyStatus::passed; break;
                case kernels::PeerPullStatus::wrong_bytes: line.status = PeerCopyStatus::wrong_bytes; break;
                case kernels::PeerPullStatus::no_peer_access:
                    line.status = PeerCopyStatus::skipped;
                    line.no_peer_access = true;
                    break;
                case kernels::PeerPullStatus::error: line.status = PeerCopyStatus::error; break;
            }
            return format_pulled_line(line);
        }
    }
    return {};
}

// The same, acted out (test builds): every link passes at a fixed rate far
// above any real path, unless a fault says otherwise.
std::string simulate_link_command(const LinkCommand& command, const std::string& fault) {
    if (fault == "hang")
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // the parent's limit ends it
    switch (command.kind) {
        case LinkCommand::Kind::host_link: {
            const double rate = fault == "slow" ? 0.5 : 100.0;
            return format_host_link_line({fault != "error", rate, rate, {}, "simulated"});
        }
        case LinkCommand::Kind::export_buffer:
            return format_exported_line({true, "simulated-" + std::to_string(command.gpu), "simulated"});
        case LinkCommand::Kind::pull: {
            PulledLine line;
            line.from = command.gpu;
            line.status = fault == "wrong-bytes" ? PeerCopyStatus::wrong_bytes
                          : fault == "error"     ? PeerCopyStatus::error
                                                 : PeerCopyStatus::passed;
            line.no_peer_access = fault == "no-peer-access";
            if (line.no_peer_access) line.status = PeerCopyStatus::skipped;
            line.gb_per_s = fault == "slow" ? 0.5 : 1000.0;
            line.detail = fault.empty() ? "simulated" : "simulated: " + fault;
            return format_pulled_line(line);
        }
    }
    return {};
}

}  // namespace

int run_check_worker(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
    const Clock::time_point start = Clock::now();
    CLI::App app{"provision's validation worker: opens one GPU and runs the checks named on stdin"};
    WorkerSettings settings;
    app.add_option("--gpu", settings.gpu, "CUDA index of the GPU")->required();
    app.add_option("--as", settings.source, "the GPU's index as the workload sees it (default: --gpu)");
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
    if (settings.source < 0) settings.source = settings.gpu;
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
    if (names.empty()) return 0;
    // The links, as the parent asks for them, until its input ends.
    for (std::string line; std::getline(in, line);) {
        const auto command = parse_link_command(line);
        if (!command) continue;
        const std::string fault = link_fault(settings.fault, *command, settings.source);
        if (!device.ok) {
            print(out, command->kind == LinkCommand::Kind::pull
                           ? format_pulled_line({command->gpu, PeerCopyStatus::error, false, 0,
                                                 "the GPU could not be opened: " + device.detail})
                       : command->kind == LinkCommand::Kind::export_buffer
                           ? format_exported_line({false, {}, "the GPU could not be opened: " + device.detail})
                           : format_host_link_line({false, 0, 0, {}, "the GPU could not be opened: " + device.detail}));
        } else {
            print(out, settings.simulate ? simulate_link_command(*command, fault)
                                         : run_link_command(*command, settings.gpu, device.pci_bus_id, fault));
        }
    }
    kernels::release_peer_exports();
    print(out, format_done_line(Clock::now(), waited_ms));
    return 0;
}

int check_worker_main(const std::vector<std::string>& args) {
    name_this_process_as_gpu_worker();  // so that NVML's process lists can tell it from a workload
    return run_check_worker(args, std::cin, std::cout, std::cerr);
}

}  // namespace provision
