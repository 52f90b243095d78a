// The rounds of pairs of a pod, played on two GPUs.  With --gpus 4 (the
// default): workload GPUs 0 and 3 are the first GPU, 1 and 2 the second, in
// two worker processes (0-1 and 2-3), as tests/gpu's "four workload GPUs on
// two" lays them out.  Round 1 pairs each GPU with itself across the
// processes (the imports made beside the checks), round 2 crosses the
// processes over the GPUs' own link (each process pulls, into its other
// GPU, the buffers round 1 imported), round 3 stays within the processes.
// With --gpus 8: eight workload GPUs, the even ones the first GPU and the odd
// ones the second, in four processes of two (0-1, 2-3, ...): seven rounds of
// four pairs, eight pulls a round, four on each GPU.  Each run's workers
// write their timeline (a fault-injection build of the worker) and this
// prints, per round after the first, the time from its first pull sent to
// its last answer; medians of the runs.
//
//   bench/pod_rounds --worker PATH [--gpus 4|8] [--path cumem-fd|legacy-ipc] [--runs 8] [--label NAME]
//
// Run it with two workers (before and after a change) in turns, on one
// machine, to compare.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "validate/validation.h"
#include "validation_kernels.h"

using namespace provision;

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

// From a worker timeline ("NS PID GPU in|out TEXT", a worker of several GPUs
// tagging its input "N:line"): each GPU's pull commands in and answers out.
struct PullTimes {
    std::map<int, std::vector<long long>> sent, answered;  // by GPU, in order
};

PullTimes read_timeline(const std::string& path) {
    PullTimes times;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        long long ns = 0;
        long pid = 0;
        int gpu = 0;
        std::string way;
        fields >> ns >> pid >> gpu >> way;
        std::string text;
        std::getline(fields, text);
        if (!text.empty() && text[0] == ' ') text.erase(0, 1);
        if (way == "in" && gpu < 0) {  // "N:text"
            const auto colon = text.find(':');
            if (colon == std::string::npos) continue;
            gpu = std::stoi(text.substr(0, colon));
            text = text.substr(colon + 1);
        }
        if (way == "in" && text.rfind("pull ", 0) == 0) times.sent[gpu].push_back(ns);
        if (way == "out" && text.rfind("pulled", 0) == 0) times.answered[gpu].push_back(ns);
    }
    return times;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"the later rounds of a pod's pairs, four workload GPUs on two"};
    std::string worker, path_name = "cumem-fd", label;
    int runs = 8;
    int gpus = 4;
    app.add_option("--worker", worker, "a provision_check_worker built with fault injection")->required();
    app.add_option("--gpus", gpus, "workload GPUs: 4 or 8")->check(CLI::IsMember({4, 8}));
    app.add_option("--path", path_name, "cumem-fd or legacy-ipc");
    app.add_option("--runs", runs, "runs");
    app.add_option("--label", label, "the name printed with the figures");
    CLI11_PARSE(app, argc, argv);
    const auto path = parse_peer_path(path_name);
    if (!path) {
        std::fprintf(stderr, "pod_rounds: unknown path %s\n", path_name.c_str());
        return 2;
    }
    const kernels::DeviceProbe probe = kernels::probe_devices();
    if (probe.devices.size() < 2) {
        std::fprintf(stderr, "pod_rounds: needs two GPUs, this machine has %zu\n", probe.devices.size());
        return 1;
    }
    std::vector<std::string> uuids;
    for (int gpu = 0; gpu < 2; ++gpu) uuids.push_back(kernels::open_device(gpu).uuid);
    std::vector<WorkerTarget> targets;
    std::vector<GpuChecks> work;
    LinkWork links;
    links.peer_path = *path;
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const bool first = gpus == 4 ? gpu == 0 || gpu == 3 : gpu % 2 == 0;
        const std::string& uuid = uuids[first ? 0 : 1];
        targets.push_back({gpu, uuid, uuid});
        work.push_back({gpu, {"attention.fp16"}});
        for (int peer = gpu + 1; peer < gpus; ++peer) links.peer_pairs.push_back({gpu, peer});
    }
    std::map<int, std::vector<double>> rounds;  // round -> ms, a value a run
    int failed = 0;
    for (int run = 0; run < runs; ++run) {
        const std::string timeline = fmt::format("/tmp/pod_rounds-{}-{}", getpid(), run);
        std::remove(timeline.c_str());
        ValidationOptions options;
        options.self_exe = worker;
        options.timeout_s = 60;
        options.worker_processes = gpus / 2;
        options.timeline = timeline;
        WorkerPool workers(options);
        workers.keep(targets);
        const auto result = workers.run(work, links);
        for (const auto& copy : result.peer_copies)
            if (copy.status != PeerCopyStatus::passed) ++failed;
        const PullTimes times = read_timeline(timeline);
        std::remove(timeline.c_str());
        for (std::size_t round = 1; round + 1 < static_cast<std::size_t>(gpus); ++round) {
            long long first = -1, last = -1;
            for (const auto& [gpu, sent] : times.sent) {
                const auto& answered = times.answered.at(gpu);
                if (sent.size() <= round || answered.size() <= round) continue;
                first = first < 0 ? sent[round] : std::min(first, sent[round]);
                last = std::max(last, answered[round]);
            }
            if (first >= 0) rounds[static_cast<int>(round) + 1].push_back(static_cast<double>(last - first) / 1e6);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    for (const auto& [round, ms] : rounds)
        fmt::print("{} {}: round {} median {:.2f} ms (min {:.2f}, max {:.2f}, {} runs)\n", label, path_name, round,
                   median(ms), *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
                   ms.size());
    if (failed) fmt::print("{} {}: {} pairs did not pass\n", label, path_name, failed);
    return failed ? 1 : 0;
}
