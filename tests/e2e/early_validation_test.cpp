// The validation workers start before the rest of the run and work beside
// it: on the fake NVML and libcuda (whose context creation can be slowed
// down and logs every context it creates) with the test-only simulated
// worker, which opens its GPU through that libcuda and acts the checks out.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "harness.h"
#include "support/proc_file.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::start;
using Clock = std::chrono::steady_clock;

namespace {

// A fixture of tests/fixtures/gpus with a [faults] table for the fakes.
std::string machine(const TempDir& dir, const std::string& fixture, const std::string& faults) {
    const std::string path = dir.file(fixture + "-machine.toml");
    e2e::write_file(path, e2e::read_file(e2e::gpu_fixture(fixture)) + "\n[faults]\n" + faults + "\n");
    return path;
}

// A /dev of the fake machine: one nvidiaN node per GPU of its fixture.
std::string device_nodes(const TempDir& dir, const std::string& machine_file) {
    const std::string dev = dir.file("dev");
    std::filesystem::create_directories(dev);
    const std::string text = e2e::read_file(machine_file);
    int gpus = 0;
    for (std::size_t at = text.find("[[gpus]]"); at != std::string::npos; at = text.find("[[gpus]]", at + 1)) ++gpus;
    for (int i = 0; i < gpus; ++i) e2e::write_file(dev + "/nvidia" + std::to_string(i), "");
    e2e::write_file(dev + "/nvidiactl", "");
    return dev;
}

std::map<std::string, std::string> fake_driver(const TempDir& dir, const std::string& machine_file) {
    return {{"PROVISION_TEST_DEV", device_nodes(dir, machine_file)},
            {"PROVISION_FAKE_CUDA_OPEN_LOG", dir.file("opens.log")},
            {"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
            {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
            {"PROVISION_FAKE_GPU_FIXTURE", machine_file},
            {"PROVISION_FAKE_CUDA_CONTEXT_LOG", dir.file("contexts.log")},
            {"PROVISION_FAKE_CUDA_INIT_LOG", dir.file("cuinit.log")},
            {"PROVISION_TEST_WORKER", "simulate"},
            {"PROVISION_DETECT_TIMEOUT", "10"}};
}

// The fake drivers with an NVML that takes `slow_ms` to start.  Detection's
// limit leaves libcuda waiting for NVML's answer a quarter of it (10 s),
// longer than NVML takes: only the workers start libcuda, as on a machine
// where NVML answers.
std::map<std::string, std::string> slow_nvml_driver(const TempDir& dir, const std::string& machine_file) {
    auto env = fake_driver(dir, machine_file);
    env["PROVISION_DETECT_TIMEOUT"] = "40";
    return env;
}

struct Interval {
    long pid = 0;
    long long begin = 0, end = 0;  // monotonic ns
    std::string uuid;
};

std::vector<Interval> intervals_in(const std::string& log) {
    std::vector<Interval> intervals;
    std::ifstream in(log);
    for (Interval i; in >> i.pid >> i.begin >> i.end >> i.uuid;) intervals.push_back(i);
    return intervals;
}

std::vector<Interval> contexts(const TempDir& dir) { return intervals_in(dir.file("contexts.log")); }

// Each opening of a peer's memory (the fake libcuda's cuIpcOpenMemHandle_v2
// or cuMemImportFromShareableHandle).
std::vector<Interval> opens(const TempDir& dir) { return intervals_in(dir.file("opens.log")); }

// The most intervals under way at one moment.
std::size_t most_at_once(const std::vector<Interval>& intervals) {
    std::size_t most = 0;
    for (const Interval& at : intervals)
        most = std::max<std::size_t>(most, std::count_if(intervals.begin(), intervals.end(), [&](const Interval& i) {
                                             return i.begin <= at.begin && at.begin < i.end;
                                         }));
    return most;
}

// The processes that called cuInit (the fake libcuda logs "cuInit PID").
std::set<long> cuinit_pids(const TempDir& dir) {
    std::set<long> pids;
    std::ifstream in(dir.file("cuinit.log"));
    std::string word;
    for (long pid; in >> word >> pid;) pids.insert(pid);
    return pids;
}

// Gone within two seconds (a killed process may take the kernel a moment).
bool gone_soon(long pid) {
    for (int i = 0; i < 200 && proc::running(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return !proc::running(pid);
}

double timing(const nlohmann::json& report, const char* phase) {
    REQUIRE(report["timings"].contains(phase));
    return report["timings"][phase].get<double>();
}

bool skip_without_fault_injection() {
    if (PROVISION_FAULT_INJECTION) return false;
    WARN("skipped: built without fault injection (PROVISION_FAULT_INJECTION=OFF), so no simulated worker");
    return true;
}

// SIGTERM to `target` once a worker has called cuInit and is creating its
// (30 s) context; waits for `pid`.  Returns its exit status and how long it took.
std::pair<int, double> terminate_during_context(const TempDir& dir, pid_t pid, pid_t target) {
    for (int i = 0; i < 1000 && cuinit_pids(dir).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE_FALSE(cuinit_pids(dir).empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto sent = Clock::now();
    ::kill(target, SIGTERM);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0 && Clock::now() - sent < std::chrono::seconds(20))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (::waitpid(pid, &status, WNOHANG) == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return {code, std::chrono::duration<double>(Clock::now() - sent).count()};
}

}  // namespace

TEST_CASE("eight GPUs' workers create their contexts at the same time, each on its own GPU", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto result =
        e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("all")},
                       fake_driver(dir, machine(dir, "8x-h100", "contexts_meet = 8\ncontext_delay_ms = 50")));
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["validation"]["status"] == "passed");
    // attention.bf16.wgmma, attention.bf16, attention.fp16, gemm.tf32, gemm.fp8, gemm.fp8.wgmma
    CHECK(report["validation"]["checks"].size() == 8 * 6);
    const auto intervals = contexts(dir);
    REQUIRE(intervals.size() == 8);
    std::set<std::string> uuids;
    for (const auto& interval : intervals) uuids.insert(interval.uuid);
    std::set<std::string> expected;
    for (const auto& gpu : report["gpus"]) expected.insert(gpu["uuid"].get<std::string>());
    CHECK(uuids == expected);  // each worker process saw its own GPUs alone, from CUDA index 0
    CHECK(most_at_once(intervals) == 8);
    // Two worker processes, four GPUs each.
    std::map<long, int> per_process;
    for (const auto& interval : intervals) ++per_process[interval.pid];
    CHECK(per_process.size() == 2);
    for (const auto& [pid, count] : per_process) CHECK(count == 4);
    CHECK(cuinit_pids(dir).size() == 2);
    CHECK(timing(report, "worker_ready") <= timing(report, "checks"));
    reliability::record("validation", "8 GPUs whose contexts wait for each other to be created (fake libcuda)",
                        "two worker processes of four GPUs, each seeing its own alone; all 8 contexts created at once; "
                        "every check passed",
                        "nothing");
}

TEST_CASE("the selection made before the worker has opened its GPU waits for it", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto result = e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("all")},
                                       fake_driver(dir, machine(dir, "h100", "context_delay_ms = 8000")));
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["validation"]["status"] == "passed");
    CHECK(report["selected"]["mechanism"] == "flash3");
    CHECK(timing(report, "selection") < timing(report, "worker_ready"));
    CHECK(timing(report, "worker_ready") <= timing(report, "checks"));
    CHECK(contexts(dir).size() == 1);
}

TEST_CASE("a worker ready before the selection is made gets its checks then", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    // Detection itself takes 6 s (room for a loaded sanitizer build to open
    // the GPU); the first GPU's worker started before it.
    const auto result = e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("all")},
                                       slow_nvml_driver(dir, machine(dir, "h100", "nvml_init_slow_ms = 6000")));
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["validation"]["status"] == "passed");
    CHECK(timing(report, "worker_ready") < timing(report, "detection"));
    CHECK(timing(report, "selection") < timing(report, "checks"));
    REQUIRE(contexts(dir).size() == 1);
    CHECK(contexts(dir)[0].uuid == report["gpus"][0]["uuid"]);
}

TEST_CASE("a worker started early and then not needed is stopped and leaves no process", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    // A T4 with no packages: eager, whose selection needs no check, and TF32
    // needs an Ampere.  The first GPU's worker was started before detection;
    // detection is slowed (NVML's init, 6 s) so that the worker has surely
    // reached cuInit, and logged its PID, before it is found not needed, even
    // in a loaded sanitizer build whose processes start slowly.
    const auto result =
        e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("none")},
                       slow_nvml_driver(dir, machine(dir, "t4", "context_delay_ms = 30000\nnvml_init_slow_ms = 6000")));
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "eager");
    CHECK(report["validation"]["status"] == "skipped");
    CHECK_FALSE(report["timings"].contains("worker_ready"));
    CHECK_FALSE(report["timings"].contains("checks"));
    const auto pids = cuinit_pids(dir);
    REQUIRE(pids.size() == 1);
    CHECK(gone_soon(*pids.begin()));
    CHECK(contexts(dir).empty());  // killed inside its 30 s context creation
    reliability::record("validation", "a GPU worker started before detection, then not needed (T4, eager)",
                        "killed at once; validation skipped (no check applies); the run does not wait for it",
                        "nothing");
}

TEST_CASE("no worker is started where nothing is validated", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto env = fake_driver(dir, machine(dir, "h100", "context_delay_ms = 10"));
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--check", "--json", "--no-validate", "--site-packages", e2e::site_packages("all")},
          std::vector<std::string>{"--check", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                   e2e::site_packages("all")}}) {
        const auto result = e2e::provision(args, env);
        CHECK(result.exit_code == 0);
        CHECK(e2e::report(result)["validation"]["status"] == "skipped");
    }
    CHECK(cuinit_pids(dir).empty());  // neither a worker nor detection started libcuda
    CHECK(contexts(dir).empty());
}


TEST_CASE("SIGTERM while the early worker is still creating its context stops both at once", "[early-validation]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    auto env = fake_driver(dir, machine(dir, "h100", "context_delay_ms = 30000"));
    env["PATH"] = "/usr/bin:/bin";
    const pid_t pid = start({PROVISION_BINARY, "--check", "--site-packages", e2e::site_packages("all"), "--env-file",
                             dir.file("env")},
                            env);
    const auto [status, seconds] = terminate_during_context(dir, pid, pid);
    CHECK(status == 143);
    CHECK(seconds < 15);  // at once, not after the fake's 30 s context
    const auto pids = cuinit_pids(dir);
    REQUIRE(pids.size() == 1);
    CHECK(gone_soon(*pids.begin()));
    CHECK_FALSE(std::filesystem::exists(dir.file("env")));
    reliability::record("signals", "SIGTERM while the early GPU worker is still creating its context (30 s)",
                        "exit 143 at once; the worker is killed with its process group; no env file",
                        "the run (by design)");
}

TEST_CASE("as PID 1, SIGTERM while the early worker is still creating its context stops provision at once",
          "[early-validation]") {
    if (skip_without_fault_injection()) return;
    if (e2e::skip_unless_provision_can_be_pid_1()) return;
    TempDir dir;
    auto env = fake_driver(dir, machine(dir, "h100", "context_delay_ms = 30000"));
    env["PATH"] = "/usr/bin:/bin";
    const pid_t unshare_pid = start({"unshare", "--pid", "--fork", "--kill-child", PROVISION_BINARY, "--check",
                                     "--site-packages", e2e::site_packages("all"), "--env-file", dir.file("env")},
                                    env);
    pid_t provision_pid = 0;
    for (int attempt = 0; attempt < 200 && provision_pid == 0; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::string children = "/proc/" + std::to_string(unshare_pid) + "/task/" + std::to_string(unshare_pid) +
                                     "/children";
        if (std::filesystem::exists(children) && !e2e::read_file(children).empty())
            provision_pid = std::stoi(e2e::read_file(children));
    }
    REQUIRE(provision_pid > 0);
    const auto [status, seconds] = terminate_during_context(dir, unshare_pid, provision_pid);
    CHECK(status == 143);
    CHECK(seconds < 15);  // at once, not after the fake's 30 s context
    CHECK_FALSE(std::filesystem::exists(dir.file("env")));
    reliability::record("signals", "SIGTERM to provision as PID 1 while its early GPU worker creates its context",
                        "exit 143 at once; the namespace and the worker with it are gone", "the run (by design)");
}

TEST_CASE("a hang in the worker's cuInit and a worker that dies creating its context end as failed checks",
          "[early-validation]") {
    if (skip_without_fault_injection()) return;
    SECTION("cuInit hangs") {
        // Opening the GPU is detection's work: PROVISION_DETECT_TIMEOUT
        // limits it (here 5 s), from the worker's start.
        TempDir dir;
        auto env = fake_driver(dir, machine(dir, "h100", "cuda_init_delay_ms = 30000"));
        env["PROVISION_DETECT_TIMEOUT"] = "5";
        const auto result = e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("torch-only")},
                                           env);
        INFO("stderr: " << result.err);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "failed");
        for (const auto& check : report["validation"]["checks"]) {
            CHECK(check["status"] == "timeout");
            CHECK(check["detail"].get<std::string>().find("still opening the GPU after 5 s") != std::string::npos);
        }
        CHECK(result.exit_code == 5);
        reliability::record("validation", "the GPU worker's cuInit hangs (30 s) with PROVISION_DETECT_TIMEOUT=5",
                            "the worker is killed at the opening's limit; every check timeout ('still opening the "
                            "GPU after 5 s'); exit 5, validation failed",
                            "the run");
    }
    SECTION("context creation fails") {
        TempDir dir;
        const auto result = e2e::provision(
            {"--check", "--json", "--site-packages", e2e::site_packages("torch-only")},
            fake_driver(dir, machine(dir, "h100",
                                     "failing_calls = [{ function = \"cuDevicePrimaryCtxRetain\", gpu = 0, error = 2 }]")));
        INFO("stderr: " << result.err);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "failed");
        for (const auto& check : report["validation"]["checks"]) {
            CHECK(check["status"] == "error");
            CHECK(check["detail"].get<std::string>().find("the GPU could not be opened") != std::string::npos);
        }
        CHECK(result.exit_code == 5);
        reliability::record("validation", "the GPU worker cannot create its context (out of memory)",
                            "every check error naming why the GPU could not be opened; exit 5, validation failed",
                            "the run");
    }
}

TEST_CASE("eight GPUs: every worker starts before detection, the contexts are made together, the pairs of a round "
          "at once", "[early-validation][pod]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    // NVML takes 1.5 s to start: every worker must have been started before it answered.
    const auto result = e2e::provision(
        {"--check", "--json", "--site-packages", e2e::site_packages("torch-only")},
        fake_driver(dir, machine(dir, "pod-8x-h100-nvswitch",
                                 "contexts_meet = 8\ncontext_delay_ms = 50\nopenings_meet = 8\nhandle_open_delay_ms = 50\n"
                                 "nvml_init_slow_ms = 1500")));
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["validation"]["status"] == "passed");
    REQUIRE(report["timings"]["gpus"].size() == 8);
    for (const auto& gpu : report["timings"]["gpus"]) {
        CHECK(gpu["started"].get<double>() < timing(report, "detection"));
        CHECK(gpu["started"].get<double>() <= gpu["running"].get<double>());
        CHECK(gpu["running"].get<double>() <= gpu["ready"].get<double>());
        CHECK(gpu["ready"].get<double>() <= gpu["done"].get<double>());
    }
    CHECK(most_at_once(contexts(dir)) == 8);
    // 28 pairs in 7 rounds of 4, both ways at once: 56 openings, 8 at a time.
    const auto openings = opens(dir);
    CHECK(openings.size() == 56);
    CHECK(most_at_once(openings) == 8);
    for (const auto& link : report["links"]) CHECK(link["check"]["status"] == "passed");
    reliability::record("validation",
                        "8 GPUs, NVML 1.5 s to start, contexts and peer openings that wait for each other in 8s (fake libcuda)",
                        "every worker started before detection; the 8 contexts made at once; 28 pairs in 7 rounds, "
                        "the 8 openings of a round at once; every check and pair passed",
                        "nothing");
}

TEST_CASE("eight GPUs in one worker process or in a process each: the same verdicts, the contexts made together",
          "[early-validation][pod]") {
    if (skip_without_fault_injection()) return;
    for (const int processes : {1, 8}) {
        INFO(processes << " worker processes");
        TempDir dir;
        const auto result = e2e::provision(
            {"--check", "--json", "--site-packages", e2e::site_packages("torch-only"), "--worker-processes",
             std::to_string(processes)},
            fake_driver(dir, machine(dir, "pod-8x-h100-nvswitch",
                                     "contexts_meet = 8\ncontext_delay_ms = 50\nopenings_meet = 8\nhandle_open_delay_ms = 50")));
        INFO("stderr: " << result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "passed");
        REQUIRE(report["links"].size() == 28);
        for (const auto& link : report["links"]) CHECK(link["check"]["status"] == "passed");
        CHECK(cuinit_pids(dir).size() == static_cast<std::size_t>(processes));
        CHECK(most_at_once(contexts(dir)) == 8);
        const auto openings = opens(dir);
        CHECK(openings.size() == 56);
        CHECK(most_at_once(openings) == 8);
    }
}

TEST_CASE("a worker started for a GPU that detection does not confirm is stopped and leaves nothing",
          "[early-validation][pod]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    // Two device nodes, but the machine has one GPU: the second worker
    // (CUDA_VISIBLE_DEVICES=1) finds none, and detection confirms only GPU 0.
    const std::string machine_file = machine(dir, "h100", "nvml_init_slow_ms = 6000");
    auto env = slow_nvml_driver(dir, machine_file);
    e2e::write_file(env["PROVISION_TEST_DEV"] + "/nvidia1", "");
    const auto result = e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("torch-only")}, env);
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["gpus"].size() == 1);
    CHECK(report["validation"]["status"] == "passed");
    REQUIRE(report["timings"]["gpus"].size() == 1);
    const auto pids = cuinit_pids(dir);
    CHECK(pids.size() == 2);  // both workers were started and reached cuInit before NVML answered
    for (const long pid : pids) CHECK(gone_soon(pid));
    CHECK(contexts(dir).size() == 1);
    reliability::record("validation", "a /dev/nvidiaN node for a GPU CUDA does not show (two nodes, one GPU)",
                        "its worker, started at once, is stopped once detection confirms one GPU; no process left",
                        "nothing");
}

TEST_CASE("a GPU with no room for a context beside another process is busy, never a failed check",
          "[early-validation][busy]") {
    if (skip_without_fault_injection()) return;
    SECTION("another process holds it: busy, its checks not measured; exit 7 (--busy-gpu fail)") {
        TempDir dir;
        const std::string file = dir.file("busy-h100.toml");
        e2e::write_file(file, e2e::read_file(e2e::gpu_fixture("h100")) +
                                  "\n[gpus.health]\nother_processes = 1\nmemory_used_mib = 79000\n"
                                  "\n[faults]\nfailing_calls = [{ function = \"cuDevicePrimaryCtxRetain\", gpu = 0, "
                                  "error = 2 }]\n");
        const auto result =
            e2e::provision({"--check", "--json", "--site-packages", e2e::site_packages("torch-only")},
                           fake_driver(dir, file));
        INFO("stderr: " << result.err);
        CHECK(result.exit_code == 7);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "skipped");
        REQUIRE(report["validation"]["busy"].size() == 1);
        CHECK(e2e::has(report["validation"]["busy"][0]["reason"], "no room for a context: 1 other process holds 79000 MiB"));
        for (const auto& check : report["validation"]["checks"]) CHECK(check["status"] == "not-measured");
        REQUIRE(e2e::findings_of(report, "memory_in_use").size() == 1);
        // A shared GPU: the container's to change, not the node's.
        const auto action = e2e::findings_of(report, "memory_in_use")[0]["action"];
        CHECK(action["actor"] == "container");
        CHECK(action["fleet"] == "NONE");
        CHECK(e2e::has(result.err, "What to do, by who acts:\n    container: GPU 0 is shared with other processes"));
        CHECK(report["verdict"] == "failed");
        reliability::record("validation", "the worker finds no room for a context while another process holds the GPU",
                            "busy, said with the process and its memory; its checks not-measured, none failed; exit 7 "
                            "(--busy-gpu fail; share: exit 0, degraded)",
                            "the run (by the policy)");
    }
    SECTION("memory in use that NVML lists no process for (another container's): busy too") {
        TempDir dir;
        const std::string file = dir.file("held-h100.toml");
        e2e::write_file(file, e2e::read_file(e2e::gpu_fixture("h100")) +
                                  "\n[gpus.health]\nmemory_used_mib = 80000\n"
                                  "\n[faults]\nfailing_calls = [{ function = \"cuDevicePrimaryCtxRetain\", gpu = 0, "
                                  "error = 2 }]\n");
        const auto result = e2e::provision(
            {"--check", "--json", "--busy-gpu", "share", "--site-packages", e2e::site_packages("torch-only")},
            fake_driver(dir, file));
        INFO("stderr: " << result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        REQUIRE(report["validation"]["busy"].size() == 1);
        CHECK(e2e::has(report["validation"]["busy"][0]["reason"], "NVML lists no process, yet 80000 MiB"));
        CHECK(report["verdict"] == "degraded");
    }
    SECTION("nothing else holds it: a failed check, as before") {
        TempDir dir;
        const auto result = e2e::provision(
            {"--check", "--json", "--site-packages", e2e::site_packages("torch-only")},
            fake_driver(dir, machine(dir, "h100", "failing_calls = [{ function = \"cuDevicePrimaryCtxRetain\", gpu = 0, error = 2 }]")));
        CHECK(result.exit_code == 5);
        CHECK_FALSE(e2e::report(result)["validation"].contains("busy"));
    }
}
