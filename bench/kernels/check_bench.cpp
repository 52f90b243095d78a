// Time of each validation check on GPU 0, quick and full mode, through the
// public API the worker calls (prepare_check, then run): the device half's
// wall time, and the check's own kernel time and TFLOP/s.  Median of --runs
// rounds after one untimed round; the checks take turns within a round.
// One JSON object per line on stdout, a table on stderr.
// --together runs the device halves at once, a thread each, as the worker
// runs the quick checks: each one's wall time and the round's.
// --host-halves times only the host halves (no device needed): each alone,
// then all at once on a thread each as the worker starts them, wall and CPU
// time, the CPU time being what competes with the context's creation.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "validation_kernels.h"

using namespace provision::kernels;

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? NAN : values[values.size() / 2];
}

const char* status_name(CheckStatus status) {
    switch (status) {
        case CheckStatus::passed: return "passed";
        case CheckStatus::failed: return "failed";
        case CheckStatus::unsupported: return "unsupported";
        case CheckStatus::error: return "error";
    }
    return "?";
}

struct Samples {
    std::vector<double> wall_ms, kernel_ms, tflops;
    double first_wall_ms = 0;  // the untimed round's: the context's first use of the check's modules and memory
    std::string status = "passed";
};

double process_cpu_ms() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

double wall_ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Each host half alone, then all of them at once; medians of `runs` rounds.
void time_host_halves(const std::vector<std::string>& names, int runs) {
    std::map<std::string, std::vector<double>> wall, cpu;
    std::vector<double> together_wall, together_cpu;
    for (int round = 0; round <= runs; ++round) {
        CheckOptions options;
        options.seed = static_cast<unsigned>(1000 + round);
        for (const std::string& name : names) {
            const double cpu_start = process_cpu_ms();
            const auto start = std::chrono::steady_clock::now();
            auto check = prepare_check(name, options);
            if (round == 0) continue;
            wall[name].push_back(wall_ms_since(start));
            cpu[name].push_back(process_cpu_ms() - cpu_start);
        }
        const double cpu_start = process_cpu_ms();
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::future<std::unique_ptr<PreparedCheck>>> halves;
        for (const std::string& name : names)
            halves.push_back(std::async(std::launch::async, [&options, name] { return prepare_check(name, options); }));
        for (auto& half : halves) half.get();
        if (round == 0) continue;
        together_wall.push_back(wall_ms_since(start));
        together_cpu.push_back(process_cpu_ms() - cpu_start);
    }
    const auto row = [](const std::string& what, const std::vector<double>& w, const std::vector<double>& c) {
        fmt::print("{{\"bench\": \"host_half\", \"check\": \"{}\", \"wall_ms\": {:.3f}, \"cpu_ms\": {:.3f}, "
                   "\"threads\": {}, \"runs\": {}}}\n",
                   what, median(w), median(c), std::thread::hardware_concurrency(), w.size());
        fmt::print(stderr, "host half {:22} wall {:8.3f} ms  cpu {:8.3f} ms\n", what, median(w), median(c));
    };
    for (const std::string& name : names) row(name, wall[name], cpu[name]);
    row("all at once", together_wall, together_cpu);
}

// The device halves at once, a thread each, as the worker runs them, once
// the context is open; the first round (the process's first use of each
// kernel) apart.
void time_together(const std::vector<std::string>& names, int runs, int device) {
    std::map<std::string, std::vector<double>> wall;
    std::vector<double> round_wall;
    {  // the context first, as the worker opens it, so that the first round is the checks' alone
        const auto start = std::chrono::steady_clock::now();
        const OpenedDevice opened = open_device(device);
        fmt::print(stderr, "context: {:.3f} ms{}\n", wall_ms_since(start), opened.ok ? "" : ": " + opened.detail);
    }
    for (int round = 0; round <= runs; ++round) {
        CheckOptions options;
        options.seed = static_cast<unsigned>(1000 + round);
        std::vector<std::unique_ptr<PreparedCheck>> checks;
        for (const std::string& name : names) checks.push_back(prepare_check(name, options));
        std::vector<double> each(names.size());
        std::vector<std::thread> threads;
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < names.size(); ++i)
            threads.emplace_back([&, i] {
                const CheckResult result = checks[i]->run(device);
                each[i] = wall_ms_since(start);
                if (result.status != CheckStatus::passed && result.status != CheckStatus::unsupported)
                    fmt::print(stderr, "check_bench: {} {}: {}\n", names[i], status_name(result.status), result.detail);
            });
        for (auto& thread : threads) thread.join();
        const double total = wall_ms_since(start);
        if (round == 0) {
            fmt::print(stderr, "together, first round: {:.3f} ms\n", total);
            continue;
        }
        round_wall.push_back(total);
        for (std::size_t i = 0; i < names.size(); ++i) wall[names[i]].push_back(each[i]);
    }
    for (const std::string& name : names) {
        fmt::print("{{\"bench\": \"together\", \"check\": \"{}\", \"done_ms\": {:.3f}, \"runs\": {}}}\n", name,
                   median(wall[name]), runs);
        fmt::print(stderr, "together {:22} done at {:8.3f} ms\n", name, median(wall[name]));
    }
    fmt::print("{{\"bench\": \"together\", \"check\": \"all\", \"done_ms\": {:.3f}, \"runs\": {}}}\n",
               median(round_wall), runs);
    fmt::print(stderr, "together {:22} done at {:8.3f} ms\n", "all", median(round_wall));
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 10;
    std::vector<std::string> modes{"quick", "full"};
    std::vector<std::string> names = check_names();
    CLI::App app{"Times provision's validation checks on GPU 0; JSON lines on stdout."};
    app.add_option("--runs", runs, "timed rounds (the median is reported)")->check(CLI::PositiveNumber);
    app.add_option("--modes", modes, "quick, full")->delimiter(',')->check(CLI::IsMember({"quick", "full"}));
    app.add_option("--checks", names, "check names (default: all)")->delimiter(',');
    bool host_halves = false, together = false;
    app.add_flag("--together", together, "quick mode, the device halves at once, a thread each, as the worker runs them");
    app.add_flag("--host-halves", host_halves, "time only the checks' host halves (inputs, CPU references): no GPU");
    CLI11_PARSE(app, argc, argv);
    if (host_halves) {
        time_host_halves(names, runs);
        return 0;
    }

    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) {
        fmt::print(stderr, "check_bench: no device: {}\n", probe.detail);
        return 1;
    }
    const DeviceInfo& device = probe.devices.front();
    if (together) {
        time_together(names, runs, device.index);
        return 0;
    }
    int failures = 0;
    for (const std::string& mode : modes) {
        CheckOptions options;
        options.full = mode == "full";
        std::map<std::string, Samples> samples;
        for (int round = 0; round <= runs; ++round) {
            for (const std::string& name : names) {
                options.seed = static_cast<unsigned>(1000 + round);
                auto check = prepare_check(name, options);
                const auto start = std::chrono::steady_clock::now();
                const CheckResult result = check->run(device.index);
                const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
                Samples& s = samples[name];
                if (result.status != CheckStatus::passed) {
                    if (s.status == "passed") s.status = status_name(result.status);
                    if (result.status != CheckStatus::unsupported) {
                        ++failures;
                        fmt::print(stderr, "check_bench: {} {}: {}\n", name, status_name(result.status), result.detail);
                    }
                }
                if (round == 0) {  // warm-up: module load, first allocations
                    s.first_wall_ms = wall;
                    continue;
                }
                s.wall_ms.push_back(wall);
                s.kernel_ms.push_back(result.ms);
                s.tflops.push_back(result.tflops);
            }
        }
        for (const std::string& name : names) {
            const Samples& s = samples[name];
            fmt::print("{{\"bench\": \"check\", \"device\": \"{}\", \"check\": \"{}\", \"mode\": \"{}\", \"status\": \"{}\", "
                       "\"wall_ms\": {:.4f}, \"first_wall_ms\": {:.4f}, \"kernel_ms\": {:.4f}, \"tflops\": {:.2f}, \"runs\": {}, "
                       "\"wall_samples\": [{:.4f}], \"kernel_samples\": [{:.4f}], \"tflops_samples\": [{:.2f}]}}\n",
                       device.name, name, mode, s.status, median(s.wall_ms), s.first_wall_ms, median(s.kernel_ms),
                       median(s.tflops),
                       s.wall_ms.size(), fmt::join(s.wall_ms, ", "), fmt::join(s.kernel_ms, ", "),
                       fmt::join(s.tflops, ", "));
            fmt::print(stderr, "{:6} {:22} {:12} wall {:9.3f} ms (first {:9.3f})  kernels {:8.3f} ms  {:7.1f} TFLOP/s\n",
                       mode, name, s.status, median(s.wall_ms), s.first_wall_ms, median(s.kernel_ms), median(s.tflops));
        }
    }
    return failures == 0 ? 0 : 1;
}
