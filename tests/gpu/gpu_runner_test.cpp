// run_validation with the real worker on the real GPUs: results for all of
// them, a planted hang killed at the limit, a planted wrong result reported.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "gpu_test_support.h"
#include "validate/validation.h"

using namespace provision;
using namespace provision::gpu_tests;

namespace {

// provision_check_worker beside this binary (PROVISION_CHECK_WORKER overrides).
std::string worker_path() {
    if (const char* path = std::getenv("PROVISION_CHECK_WORKER")) return path;
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "provision_check_worker").string();
}

std::vector<GpuChecks> every_gpu_every_check() {
    std::vector<GpuChecks> work;
    for (const auto& device : kernels::probe_devices().devices) work.push_back({device.index, kernels::check_names()});
    return work;
}

ValidationOptions options_with(double timeout_s, const std::string& fault = "") {
    ValidationOptions options;
    options.self_exe = worker_path();
    options.timeout_s = timeout_s;
    options.fault = fault;
    return options;
}

}  // namespace

TEST_CASE("runner: every GPU validates in its own worker", "[gpu][runner]") {
    if (!device_or_skip()) return;
    const auto work = every_gpu_every_check();
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run_validation(work, options_with(60));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("runner: {} GPU(s), {} checks in {:.2f} s\n", work.size(), outcomes.size(), seconds);
    REQUIRE(outcomes.size() == work.size() * kernels::check_names().size());
    for (const auto& outcome : outcomes) {
        fmt::print("| runner | gpu {} | {} | {} | {:.3e} | {:.3e} | {:.3f} | {} |\n", outcome.gpu, outcome.name,
                   to_string(outcome.status), outcome.max_rel_error, outcome.tolerance, outcome.ms, outcome.detail);
        INFO(outcome.name << ": " << outcome.detail);
        CHECK((outcome.status == CheckStatus::passed || outcome.status == CheckStatus::unsupported));
    }
}

TEST_CASE("runner: a planted hang is killed at the limit and the GPU stays usable", "[gpu][runner]") {
    const auto device = device_or_skip();
    if (!device) return;
    const double limit = 3;
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run_validation({{device->index, {"attention.fp16"}}}, options_with(limit, "*=hang"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("runner: planted hang reported after {:.2f} s (limit {} s)\n", seconds, limit);
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].status == CheckStatus::timeout);
    CHECK(seconds < limit + 2);
    // The killed worker's context is gone: the next one runs normally.
    const auto after = run_validation({{device->index, {"attention.fp16"}}}, options_with(60));
    REQUIRE(after.size() == 1);
    INFO(after[0].detail);
    CHECK(after[0].status == CheckStatus::passed);
}

TEST_CASE("runner: a planted wrong result fails only its own check", "[gpu][runner]") {
    const auto device = device_or_skip();
    if (!device) return;
    const auto outcomes = run_validation({{device->index, {"attention.fp16", "gemm.tf32"}}},
                                         options_with(60, "attention.fp16=wrong-result"));
    REQUIRE(outcomes.size() == 2);
    CHECK(outcomes[0].status == CheckStatus::failed);
    CHECK(outcomes[0].max_rel_error > outcomes[0].tolerance);
    CHECK((outcomes[1].status == CheckStatus::passed || outcomes[1].status == CheckStatus::unsupported));
}

TEST_CASE("runner: a worker that sees its GPU alone, by UUID, validates that GPU", "[gpu][runner]") {
    const auto device = device_or_skip();
    if (!device) return;
    const kernels::OpenedDevice opened = kernels::open_device(device->index);
    REQUIRE(opened.ok);
    fmt::print("runner: GPU {} is {}\n", device->index, opened.uuid);
    WorkerPool workers(options_with(60));
    workers.keep({{device->index, opened.uuid, opened.uuid}});
    const auto outcomes = workers.run({{device->index, {"attention.fp16"}}}).checks;
    REQUIRE(outcomes.size() == 1);
    INFO(outcomes[0].detail);
    CHECK(outcomes[0].status == CheckStatus::passed);
    CHECK(workers.ready_at());
}

TEST_CASE("runner: two workers on one GPU copy to each other through CUDA IPC, every word checked",
          "[gpu][runner][links]") {
    const auto device = device_or_skip();
    if (!device) return;
    const kernels::OpenedDevice opened = kernels::open_device(device->index);
    REQUIRE(opened.ok);
    // The same GPU stands for "GPU 0" and "GPU 1": the handles, the mapping,
    // the copies and the check run as between two GPUs, over the GPU's own memory.
    for (const std::string fault : {"", "link=wrong-bytes"}) {
        INFO("fault: " << fault);
        WorkerPool workers(options_with(60, fault));
        workers.keep({{0, opened.uuid, opened.uuid}, {1, opened.uuid, opened.uuid}});
        LinkWork links;
        links.host_links = true;
        links.peer_pairs = {{0, 1}};
        const auto run = workers.run({{0, {"attention.fp16"}}, {1, {"attention.fp16"}}}, links);
        REQUIRE(run.peer_copies.size() == 1);
        const PeerCopyResult& copy = run.peer_copies[0];
        fmt::print("runner: IPC copy on one GPU{}: {}, {:.1f} / {:.1f} GB/s; {}\n", fault.empty() ? "" : " (" + fault + ")",
                   to_string(copy.status), copy.gb_per_s_forward, copy.gb_per_s_backward, copy.detail);
        if (fault.empty()) {
            CHECK(copy.status == PeerCopyStatus::passed);
            CHECK(copy.gb_per_s_forward > 0);
            CHECK(copy.gb_per_s_backward > 0);
        } else {
            CHECK(copy.status == PeerCopyStatus::wrong_bytes);
            CHECK(copy.detail.find("words wrong") != std::string::npos);
        }
        REQUIRE(run.host_copies.size() == 2);
        for (const HostCopyResult& host : run.host_copies) {
            fmt::print("runner: host link of GPU {}: {:.1f} GB/s to the device, {:.1f} back; link {}\n", host.gpu,
                       host.h2d_gb_per_s, host.d2h_gb_per_s,
                       host.link_while_busy ? fmt::format("Gen{} x{}", host.link_while_busy->generation,
                                                          host.link_while_busy->width)
                                            : std::string("not read"));
            CHECK(host.h2d_gb_per_s > 1);
            CHECK(host.d2h_gb_per_s > 1);
        }
    }
}

TEST_CASE("runner: two GPUs in one worker process copy to each other through peer access on both paths; in two "
          "processes, through the path itself", "[gpu][runner][links]") {
    const kernels::DeviceProbe probe = kernels::probe_devices();
    if (probe.devices.size() < 2) {
        WARN(fmt::format("skipped: needs two GPUs, this machine has {}", probe.devices.size()));
        return;
    }
    std::vector<WorkerTarget> targets;
    for (int gpu = 0; gpu < 2; ++gpu) {
        const kernels::OpenedDevice opened = kernels::open_device(probe.devices[static_cast<std::size_t>(gpu)].index);
        REQUIRE(opened.ok);
        targets.push_back({gpu, opened.uuid, opened.uuid});
    }
    for (const int processes : {1, 2})
        for (const PeerPath path : {PeerPath::legacy_ipc, PeerPath::cumem_fd}) {
            INFO(processes << " worker process(es), " << to_string(path));
            ValidationOptions options = options_with(60);
            options.worker_processes = processes;
            WorkerPool workers(options);
            workers.keep(targets);
            LinkWork links;
            links.peer_pairs = {{0, 1}};
            links.peer_path = path;
            const auto run = workers.run({{0, {"attention.fp16"}}, {1, {"attention.fp16"}}}, links);
            for (const CheckOutcome& outcome : run.checks) CHECK(outcome.status == CheckStatus::passed);
            REQUIRE(run.peer_copies.size() == 1);
            const PeerCopyResult& copy = run.peer_copies[0];
            fmt::print("runner: GPUs 0 and 1 in {} process(es), {}: {}, {:.1f} / {:.1f} GB/s; {}\n", processes,
                       to_string(path), to_string(copy.status), copy.gb_per_s_forward, copy.gb_per_s_backward,
                       copy.detail);
            if (copy.cuda_peer_access == false) {
                WARN("CUDA refuses peer access between GPUs 0 and 1 here: nothing more to check");
                continue;
            }
            CHECK(copy.status == PeerCopyStatus::passed);
            CHECK_FALSE(copy.failed_path);
            CHECK(copy.path == path);
            CHECK(copy.gb_per_s_forward > 1);
            CHECK(copy.gb_per_s_backward > 1);
            // A worker of both GPUs reads its own buffer through peer access, on either path.
            const bool through_peer_access = copy.detail.find("both GPUs in one worker") != std::string::npos;
            CHECK(through_peer_access == (processes == 1));
        }
}

TEST_CASE("runner: four workload GPUs on two, in two worker processes: every pair passes on both paths, a process "
          "imports each cuMem buffer once, and later pulls check every word again",
          "[gpu][runner][links]") {
    const kernels::DeviceProbe probe = kernels::probe_devices();
    if (probe.devices.size() < 2) {
        WARN(fmt::format("skipped: needs two GPUs, this machine has {}", probe.devices.size()));
        return;
    }
    std::vector<std::string> uuids;
    for (int gpu = 0; gpu < 2; ++gpu) {
        const kernels::OpenedDevice opened = kernels::open_device(probe.devices[static_cast<std::size_t>(gpu)].index);
        REQUIRE(opened.ok);
        uuids.push_back(opened.uuid);
    }
    // Workload GPUs 0 and 3 are the first GPU, 1 and 2 the second; the
    // processes hold 0-1 and 2-3.  Rounds: 0-3 and 1-2 between the processes,
    // each GPU with itself (each process imports two of the other's buffers);
    // 0-2 and 1-3 between them again, across the GPUs' own link, pulling the
    // same buffers into the process's other GPU; then 0-1 and 2-3 within them.
    std::vector<WorkerTarget> targets;
    for (const int gpu : {0, 1, 2, 3}) {
        const std::string& uuid = uuids[gpu == 0 || gpu == 3 ? 0 : 1];
        targets.push_back({gpu, uuid, uuid});
    }
    for (const PeerPath path : {PeerPath::cumem_fd, PeerPath::legacy_ipc})
        for (const std::string fault : {"", "link=wrong-bytes"}) {
            INFO(to_string(path) << ", fault: " << fault);
            ValidationOptions options = options_with(60, fault);
            options.worker_processes = 2;
            // The workers' timeline, for bench/pod/pod_timeline.py (fault-injection builds).
            if (const char* timeline = std::getenv("PROVISION_TEST_WORKER_TIMELINE"); timeline && fault.empty())
                options.timeline = std::string(timeline) + "-" + std::string(to_string(path));
            WorkerPool workers(options);
            workers.keep(targets);
            LinkWork links;
            links.peer_pairs = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
            links.peer_path = path;
            const auto run = workers.run(
                {{0, {"attention.fp16"}}, {1, {"attention.fp16"}}, {2, {"attention.fp16"}}, {3, {"attention.fp16"}}},
                links);
            REQUIRE(run.peer_copies.size() == 6);
            int reused = 0;
            for (const PeerCopyResult& copy : run.peer_copies) {
                fmt::print("runner: four on two, {}{}: {}-{} {}, {:.1f} / {:.1f} GB/s; {}\n", to_string(path),
                           fault.empty() ? "" : " (" + fault + ")", copy.first, copy.second, to_string(copy.status),
                           copy.gb_per_s_forward, copy.gb_per_s_backward, copy.detail);
                if (copy.cuda_peer_access == false) continue;
                // Every pull, the later ones in their GPU's kept buffer too.
                CHECK(copy.status == (fault.empty() ? PeerCopyStatus::passed : PeerCopyStatus::wrong_bytes));
                CHECK(copy.path == path);
                if (copy.detail.find("imported already") != std::string::npos) ++reused;
            }
            // 0-2 and 1-3 pull, in the direction the detail tells, what the
            // first round imported into that process.
            if (fault.empty()) CHECK(reused == (path == PeerPath::cumem_fd ? 2 : 0));
        }
}
