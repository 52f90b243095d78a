// Time of each validation check on GPU 0, quick and full mode, through the
// public API the worker calls (prepare_check, then run): the device half's
// wall time, and the check's own kernel time and TFLOP/s.  Median of --runs
// rounds after one untimed round; the checks take turns within a round.
// One JSON object per line on stdout, a table on stderr.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
    int runs = 10;
    std::vector<std::string> modes{"quick", "full"};
    std::vector<std::string> names = check_names();
    CLI::App app{"Times provision's validation checks on GPU 0; JSON lines on stdout."};
    app.add_option("--runs", runs, "timed rounds (the median is reported)")->check(CLI::PositiveNumber);
    app.add_option("--modes", modes, "quick, full")->delimiter(',')->check(CLI::IsMember({"quick", "full"}));
    app.add_option("--checks", names, "check names (default: all)")->delimiter(',');
    CLI11_PARSE(app, argc, argv);

    const DeviceProbe probe = probe_devices();
    if (probe.devices.empty()) {
        fmt::print(stderr, "check_bench: no device: {}\n", probe.detail);
        return 1;
    }
    const DeviceInfo& device = probe.devices.front();
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
