// --repeat end to end on the fake NVML and libcuda: the machine's fixture
// file changes between rounds so that the GPU turns unhealthy, the labels
// and metrics follow at a later round, and SIGTERM removes both files and
// ends provision with 143, leaving no process of its own behind.  Where the
// build lets tests simulate the validation worker (fault injection), each
// round's worker really opens the fake GPU, and none may outlive its round.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "publish_support.h"
#include "support/proc_file.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using namespace std::chrono_literals;

namespace {

// The fake driver's machine: one H100 with `health` as its [gpus.health],
// replaced by rename so the fake NVML never reads half a file.
void write_machine(const TempDir& dir, const std::string& health) {
    std::string text =
        "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\n"
        "compute_capability = \"9.0\"\nmemory_mib = 81559\nuuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n";
    if (!health.empty()) text += "\n[gpus.health]\n" + health + "\n";
    e2e::write_file(dir.file(".machine.next"), text);
    std::filesystem::rename(dir.file(".machine.next"), dir.file("machine.toml"));
}

std::string label(const std::string& path, const std::string& key) {
    if (!std::filesystem::exists(path)) return "";
    const auto labels = publish_test::read_labels(path);
    const auto it = labels.find(key);
    return it == labels.end() ? "" : it->second;
}

// The numeric entries of /proc: the processes there when it was read.
std::vector<long> proc_pids() {
    std::vector<long> pids;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename();
        if (name.find_first_not_of("0123456789") == std::string::npos) pids.push_back(std::stol(name));
    }
    return pids;
}

// The live processes whose environment holds `marker`: provision's own
// (validation workers inherit it).  A zombie's environment reads empty.
std::vector<pid_t> processes_with(const std::string& marker) {
    std::vector<pid_t> found;
    for (const long pid : proc_pids())
        if (proc::read_file("/proc/" + std::to_string(pid) + "/environ").find(marker) != std::string::npos)
            found.push_back(static_cast<pid_t>(pid));
    return found;
}

// The workers that opened the fake GPU, in order (the fake libcuda logs
// "PID BEGIN END UUID" for each context it creates).
std::vector<long> worker_pids(const std::string& log) {
    std::vector<long> pids;
    std::ifstream in(log);
    long pid = 0;
    std::string begin, end, uuid;
    while (in >> pid >> begin >> end >> uuid) pids.push_back(pid);
    return pids;
}

// Whether `pid` is still a child of `parent`, in any state (a zombie too).
bool child_of(long pid, long parent) {
    std::istringstream fields(proc::stat_fields(pid));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    return ppid == parent;
}

}  // namespace

TEST_CASE("--repeat: the labels follow a GPU that turns unhealthy; SIGTERM removes them, exit 143", "[publish]") {
    TempDir dir;
    write_machine(dir, "");
    const std::string labels = dir.file("features.d/provision"), metrics = dir.file("textfile/provision.prom");
    const bool simulated_worker = PROVISION_FAULT_INJECTION;
    // Fixed seed: the marker is the same on every run of the suite.
    const std::string marker = fmt::format("{}", std::mt19937(23)());
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", dir.file("machine.toml")},
                                              {"PROVISION_DETECT_TIMEOUT", "20"},
                                              {"PROVISION_TEST_REPEAT_MARKER", marker}};
    if (simulated_worker) {
        env["PROVISION_TEST_WORKER"] = "simulate";
        env["PROVISION_FAKE_CUDA_CONTEXT_LOG"] = dir.file("contexts.log");
    } else {
        WARN("built without fault injection: no simulated validation worker, so the rounds validate nothing");
    }
    publish_test::Background provision({PROVISION_BINARY, "--repeat", "0.2", "--node-labels", labels, "--metrics",
                                        metrics, "--site-packages", e2e::site_packages("all")},
                                       env, dir.file("provision.log"));
    REQUIRE(provision.pid() > 0);
    // A bounded wait; on failure the message shows what provision printed.
    auto within = [&](const std::function<bool()>& ready, const char* what) {
        if (publish_test::wait_for(ready, 20s)) return;
        const std::string log = e2e::read_file(dir.file("provision.log"));
        FAIL(what << " within 20 s; provision's log ends:\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0));
    };

    within([&] { return label(labels, "provision/health") == "ok"; }, "labels of a healthy GPU");
    CHECK(label(labels, "provision/verdict") == "ok");
    CHECK(label(labels, "provision/gpu.family") == "hopper");
    if (simulated_worker) {
        CHECK(label(labels, "provision/validated") == "true");
        CHECK(label(labels, "provision/attention.flash3") == "true");
        CHECK(label(labels, "provision/tf32") == "true");
    }
    // Kept fresh: NFD drops the labels if no round replaces them.
    CHECK_THAT(e2e::read_file(labels), Catch::Contains("\n# +expiry-time="));

    write_machine(dir, "row_remap_failure = true");
    within([&] { return label(labels, "provision/health") == "failed"; }, "labels of an unhealthy GPU");
    CHECK(label(labels, "provision/verdict") == "failed");
    CHECK(label(labels, "provision/validated") == "false");
    publish_test::read_valid_labels(labels);
    within(
        [&] {
            return e2e::read_file(metrics).find("provision_finding{gpu=\"0\",UUID=\"GPU-8932f937-d72c-4106-c12f-"
                                                "20bd9faed9f6\",signal=\"row_remap_failure\",level=\"failed\"} 1") !=
                   std::string::npos;
        },
        "metrics of an unhealthy GPU");
    // A round that failed does not end the watch: the GPU heals, the labels follow.
    write_machine(dir, "");
    within([&] { return label(labels, "provision/health") == "ok"; }, "labels of a healed GPU");
    CHECK(provision.running());

    if (simulated_worker) {
        // Each round's worker opened the GPU; every one but the latest round's
        // is gone, reaped: none holds the GPU into a later round.
        within([&] { return worker_pids(dir.file("contexts.log")).size() >= 4; }, "four rounds' workers");
        const auto pids = worker_pids(dir.file("contexts.log"));
        CHECK(std::set<long>(pids.begin(), pids.end()).size() == pids.size());  // a new worker each round
        for (std::size_t i = 0; i + 1 < pids.size(); ++i) {
            INFO("round " << i + 1 << "'s worker, PID " << pids[i]);
            CHECK_FALSE(child_of(pids[i], provision.pid()));
        }
    }

    const auto status = provision.stop(SIGTERM, 5s);
    CHECK(status == 143);
    CHECK_FALSE(std::filesystem::exists(labels));
    CHECK_FALSE(std::filesystem::exists(metrics));
    // Nothing else either: no temporary file in the two folders.
    CHECK(std::filesystem::is_empty(dir.file("features.d")));
    CHECK(std::filesystem::is_empty(dir.file("textfile")));
    // No process of provision's is left (a killed worker may take the kernel a moment).
    CHECK(publish_test::wait_for([&] { return processes_with("PROVISION_TEST_REPEAT_MARKER=" + marker).empty(); },
                                 2s));
    reliability::record("repeat", "--repeat 0.2 on the fake driver; the GPU reports a row-remap failure, then heals; "
                                  "then SIGTERM",
                        "the labels follow each change at a later round (health=failed, validated=false, then ok); "
                        "each round's validation worker is gone before the next; exit 143, labels and metrics "
                        "removed, no process left",
                        "the labels (by design, as GPU Feature Discovery)");
}

namespace {

// provision --repeat on a simulated H100, its stderr in `log`.
std::vector<std::string> repeat_args(const TempDir& dir, const std::string& interval,
                                     std::vector<std::string> more) {
    std::vector<std::string> args = {PROVISION_BINARY,          "--repeat",  interval,
                                     "--gpu-fixture",           e2e::gpu_fixture("h100"),
                                     "--site-packages",         e2e::site_packages("all"),
                                     "--env-file",              dir.file(".env")};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Waits (at most 20 s) for `ready`; on failure the message shows the log.
void wait_or_fail(const TempDir& dir, const std::function<bool()>& ready, const char* what) {
    if (publish_test::wait_for(ready, 20s)) return;
    const std::string log = e2e::read_file(dir.file("provision.log"));
    FAIL(what << " within 20 s; provision's log ends:\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0));
}

bool log_has(const TempDir& dir, const std::string& words) {
    return e2e::read_file(dir.file("provision.log")).find(words) != std::string::npos;
}

}  // namespace

TEST_CASE("--repeat: a signal removes only the files provision wrote, never a link, a FIFO or a device node",
          "[publish]") {
    std::vector<std::string> kinds = {"a FIFO"};
    if (::geteuid() == 0) kinds.push_back("a character device");
    else WARN("not root: no device node (mknod) at the metrics path");
    for (const auto& kind : kinds) {
        TempDir dir;
        e2e::write_file(dir.file("precious"), "precious\n");
        std::filesystem::create_symlink(dir.file("precious"), dir.file("labels"));
        const std::string metrics = dir.file("provision.prom");
        if (kind == "a FIFO") REQUIRE(::mkfifo(metrics.c_str(), 0644) == 0);
        else REQUIRE(::mknod(metrics.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);  // as /dev/null
        publish_test::Background provision(
            repeat_args(dir, "0.2", {"--node-labels", dir.file("labels"), "--metrics", metrics}), {},
            dir.file("provision.log"));
        // A round refused both, and said so.
        wait_or_fail(
            dir, [&] { return log_has(dir, "it is a symbolic link") && log_has(dir, "it is " + kind); },
            "a round refusing both paths");
        INFO("metrics at " << kind);
        CHECK(provision.stop(SIGTERM, 5s) == 143);
        CHECK(std::filesystem::is_symlink(dir.file("labels")));
        CHECK(e2e::read_file(dir.file("precious")) == "precious\n");
        struct stat info {};
        REQUIRE(::lstat(metrics.c_str(), &info) == 0);
        CHECK((kind == "a FIFO" ? S_ISFIFO(info.st_mode) : S_ISCHR(info.st_mode)));
    }
    reliability::record("repeat",
                        "--repeat with --node-labels at a symbolic link and --metrics at a FIFO or a device node "
                        "(/dev/null's numbers), then SIGTERM",
                        "each round refuses them (exit 6 in the metrics it cannot write); SIGTERM exits 143 and "
                        "leaves the link, its target, the FIFO and the device node as they were");
}

TEST_CASE("--repeat: a signal leaves a file put in place of the one provision wrote", "[publish]") {
    TempDir dir;
    const std::string labels = dir.file("labels"), metrics = dir.file("provision.prom");
    // One round, then a long wait: the test acts between the round and the signal.
    publish_test::Background provision(repeat_args(dir, "3600", {"--node-labels", labels, "--metrics", metrics}), {},
                                       dir.file("provision.log"));
    wait_or_fail(dir, [&] { return std::filesystem::exists(metrics); }, "the first round's metrics");
    e2e::write_file(dir.file(".mine"), "someone=else\n");
    std::filesystem::rename(dir.file(".mine"), labels);  // another file at the labels' path
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    CHECK(e2e::read_file(labels) == "someone=else\n");
    CHECK_FALSE(std::filesystem::exists(metrics));  // still the one provision wrote: removed
    reliability::record("repeat", "--repeat; another file renamed over the labels provision wrote; then SIGTERM",
                        "exit 143; the other file is left, the metrics provision wrote are removed");
}

TEST_CASE("--repeat: an interval below a millisecond is a usage error, as the message says", "[publish]") {
    TempDir dir;
    e2e::RunOptions guarded;
    guarded.kill_after_s = 20;  // a run that accepted it would repeat until killed
    for (const auto& [args, env, source] :
         std::vector<std::tuple<std::vector<std::string>, std::map<std::string, std::string>, std::string>>{
             {{"--repeat", "0.0005"}, {}, "--repeat=0.0005"},
             {{"--repeat", "0.00099"}, {}, "--repeat=0.00099"},
             {{}, {{"PROVISION_REPEAT", "0.0009"}}, "PROVISION_REPEAT=0.0009"},
             {{"--validate-timeout", "0.0005"}, {}, "--validate-timeout=0.0005"},
         }) {
        std::vector<std::string> all = {"--gpu-fixture", e2e::gpu_fixture("h100"), "--env-file", dir.file(".env")};
        all.insert(all.end(), args.begin(), args.end());
        const auto result = e2e::run(PROVISION_BINARY, all, env, guarded);
        INFO(source << "\n" << result.err);
        CHECK_FALSE(result.killed_by_guard);
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(source + ": shorter than a millisecond"));
        CHECK_THAT(result.err, Catch::Contains("a number from 0.001 to"));
    }
    CHECK(e2e::run(PROVISION_BINARY,
                   {"--gpu-fixture", e2e::gpu_fixture("h100"), "--env-file", dir.file(".env"), "--validate-timeout",
                    "0.001", "--no-validate"})
              .exit_code == 0);
    reliability::record("settings input", "--repeat 0.0005, 0.00099, PROVISION_REPEAT=0.0009, --validate-timeout 0.0005",
                        "exit 2: below the 0.001 s the message names as the minimum");
}

TEST_CASE("--repeat --json: one compact report a line (JSON Lines), an error document for a stopped round",
          "[publish]") {
    for (const bool stopped : {false, true}) {
        TempDir dir;
        const std::string out = dir.file("stdout");
        auto args = repeat_args(dir, "0.1", {"--json", "--no-validate"});
        if (stopped) args[4] = e2e::gpu_fixture("bad-syntax");  // every round stops before its report (exit 3)
        publish_test::Background provision(args, {}, dir.file("provision.log"),
                                           {publish_test::StdoutTo::file, out});
        // The lines written whole (the signal may cut the last one short).
        auto lines = [&] {
            std::vector<std::string> found;
            const std::string text = std::filesystem::exists(out) ? e2e::read_file(out) : "";
            for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
                found.push_back(text.substr(at, end - at));
            return found;
        };
        wait_or_fail(dir, [&] { return lines().size() >= 3; }, "three lines on stdout");
        CHECK(provision.stop(SIGTERM, 5s) == 143);
        const auto written = lines();
        INFO((stopped ? "rounds stopped by a malformed fixture" : "rounds with a report"));
        for (const auto& line : written) {
            INFO(line.substr(0, 200));
            nlohmann::json document;
            REQUIRE_NOTHROW(document = nlohmann::json::parse(line));
            CHECK(document["schema"] == 1);
            if (stopped) CHECK(document["error"]["exit_code"] == 3);
            else CHECK(document["verdict"] == "ok");
        }
    }
    reliability::record("repeat", "--repeat 0.1 --json, with a report each round and with a malformed fixture",
                        "one JSON document a line (JSON Lines): the compact report, or the error document");
}

TEST_CASE("--repeat --json with a stdout whose reader has gone: the rounds go on, a signal still cleans up",
          "[publish]") {
    TempDir dir;
    const std::string labels = dir.file("labels"), metrics = dir.file("provision.prom");
    publish_test::Background provision(
        repeat_args(dir, "0.2", {"--json", "--node-labels", labels, "--metrics", metrics}), {},
        dir.file("provision.log"), {publish_test::StdoutTo::broken_pipe, ""});
    // Two rounds have met the broken stdout, or provision is gone.
    auto failed_rounds = [&] {
        const std::string log = e2e::read_file(dir.file("provision.log"));
        int count = 0;
        for (auto at = log.find("cannot write the JSON report to stdout"); at != std::string::npos;
             at = log.find("cannot write the JSON report to stdout", at + 1))
            ++count;
        return count;
    };
    wait_or_fail(dir, [&] { return failed_rounds() >= 2 || !provision.running(); },
                 "two rounds with a broken stdout");
    CHECK(provision.running());
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    CHECK_FALSE(std::filesystem::exists(labels));
    CHECK_FALSE(std::filesystem::exists(metrics));
    reliability::record("repeat", "--repeat --json with stdout a pipe whose reader has gone, then SIGTERM",
                        "no death by SIGPIPE: each round says it cannot write the report (exit 6) and the "
                        "next one comes; SIGTERM exits 143 and removes the labels and metrics");
}

namespace {

// The rounds begun so far: the fake NVML logs each nvmlInit_v2 (one a round).
std::size_t rounds_in(const std::string& log) {
    std::ifstream in(log);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
}

std::size_t descriptors_of(pid_t pid) {
    std::size_t count = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
         it.increment(ec))
        ++count;
    return count;
}

// The children of `parent`, in any state.
std::size_t children_of(pid_t parent) {
    std::size_t count = 0;
    for (const long pid : proc_pids()) count += child_of(pid, parent);
    return count;
}

std::map<std::string, std::string> fake_machine_env(const TempDir& dir) {
    return {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
            {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
            {"PROVISION_FAKE_GPU_FIXTURE", e2e::gpu_fixture("h100")},
            {"PROVISION_FAKE_NVML_INIT_LOG", dir.file("nvml-inits.log")},
            {"PROVISION_DETECT_TIMEOUT", "5"}};
}

}  // namespace

TEST_CASE("--repeat: 200 rounds end with the descriptors they began with", "[publish][repeat]") {
    TempDir dir;
    // Like the driver's, the fake NVML leaves a descriptor open each time it is loaded.
    publish_test::Background provision({PROVISION_BINARY, "--repeat", "0.001", "--no-validate", "--metrics",
                                        dir.file("provision.prom"), "--site-packages", e2e::site_packages("none")},
                                       fake_machine_env(dir), dir.file("provision.log"));
    REQUIRE(provision.pid() > 0);
    const std::string inits = dir.file("nvml-inits.log");
    wait_or_fail(dir, [&] { return rounds_in(inits) >= 10; }, "10 rounds");
    const std::size_t early = descriptors_of(provision.pid());
    if (!publish_test::wait_for([&] { return rounds_in(inits) >= 210; }, 120s)) FAIL("210 rounds within 120 s");
    const std::size_t late = descriptors_of(provision.pid());
    INFO("descriptors after round 10: " << early << ", after round 210: " << late);
    CHECK(late <= early + 2);  // a round in flight may hold its metrics file open
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    reliability::record("repeat", "200 rounds of --repeat on a driver whose NVML leaves a descriptor each load",
                        "the descriptors after round 210 are those after round 10: NVML stays loaded",
                        "nothing");
}

TEST_CASE("--repeat: no round's worker outlives it, also when the rounds overrun the interval", "[publish][repeat]") {
    if (!PROVISION_FAULT_INJECTION) {
        WARN("skipped: built without fault injection, so no simulated worker");
        return;
    }
    TempDir dir;
    auto env = fake_machine_env(dir);
    env["PROVISION_TEST_WORKER"] = "simulate";
    env["PROVISION_TEST_FAULT"] = "teardown=slow";  // each worker takes 300 ms to exit after its results
    publish_test::Background provision({PROVISION_BINARY, "--repeat", "0.001", "--metrics", dir.file("provision.prom"),
                                        "--site-packages", e2e::site_packages("torch-only")},
                                       env, dir.file("provision.log"));
    REQUIRE(provision.pid() > 0);
    const std::string inits = dir.file("nvml-inits.log");
    std::size_t most = 0;
    wait_or_fail(dir, [&] {
        most = std::max(most, children_of(provision.pid()));
        return rounds_in(inits) >= 8;
    }, "8 rounds");
    INFO("the most children seen at once: " << most);
    CHECK(most <= 1);  // one GPU: the round's own worker, never the last round's besides
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    reliability::record("repeat", "--repeat 0.001 (rounds overrun the interval), each worker 300 ms to exit",
                        "each round's worker is reaped before the next round starts: never two at once",
                        "nothing");
}

TEST_CASE("--repeat: a GPU other processes hold is left alone; its last proof stands, and how old it is is said",
          "[publish][repeat][busy]") {
    if (!PROVISION_FAULT_INJECTION) {
        WARN("skipped: built without fault injection, so no simulated worker");
        return;
    }
    TempDir dir;
    write_machine(dir, "");
    const std::string labels = dir.file("provision.labels"), metrics = dir.file("provision.prom");
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", dir.file("machine.toml")},
                                              {"PROVISION_FAKE_CUDA_CONTEXT_LOG", dir.file("contexts.log")},
                                              {"PROVISION_FAKE_NVML_INIT_LOG", dir.file("nvml-inits.log")},
                                              {"PROVISION_TEST_WORKER", "simulate"},
                                              {"PROVISION_DETECT_TIMEOUT", "5"}};
    publish_test::Background provision({PROVISION_BINARY, "--repeat", "0.05", "--node-labels", labels, "--metrics",
                                        metrics, "--site-packages", e2e::site_packages("torch-only")},
                                       env, dir.file("provision.log"));
    REQUIRE(provision.pid() > 0);
    const auto contexts = [&] { return worker_pids(dir.file("contexts.log")).size(); };
    // The labels of a round are written before its metrics: the first round's metrics may not be there yet.
    const auto busy_metric = [&] {
        return std::filesystem::exists(metrics) &&
               e2e::read_file(metrics).find("provision_gpu_busy{") != std::string::npos;
    };

    // Idle: the GPU is proved.
    wait_or_fail(dir, [&] { return contexts() >= 1 && label(labels, "provision/validated") == "true"; }, "a proof");
    const std::string first_proof = label(labels, "provision/validated.timestamp");
    CHECK_FALSE(first_proof.empty());

    // A job takes the GPU: no round opens it; the proof stands, with its age.
    write_machine(dir, "other_processes = 1\nmemory_used_mib = 79000");
    wait_or_fail(dir, busy_metric, "the GPU seen busy");
    const std::size_t opened = contexts();
    const std::size_t round = rounds_in(dir.file("nvml-inits.log"));
    wait_or_fail(dir, [&] { return rounds_in(dir.file("nvml-inits.log")) >= round + 3; }, "three busy rounds");
    CHECK(contexts() == opened);  // no context on the busy GPU
    CHECK(label(labels, "provision/validated") == "true");
    const std::string standing = label(labels, "provision/validated.timestamp");
    CHECK(!standing.empty());
    CHECK(standing <= std::to_string(std::time(nullptr)));
    CHECK(label(labels, "provision/health") == "degraded");  // memory_in_use: busy, never failed
    const std::string text = e2e::read_file(metrics);
    CHECK_THAT(text, Catch::Contains("provision_proof_timestamp_seconds{gpu=\"0\",UUID=\"GPU-8932f937-d72c-4106-c12f-"
                                     "20bd9faed9f6\"} " + standing));
    CHECK_THAT(text, Catch::Contains("provision_gpu_busy{gpu=\"0\""));

    // The job leaves: the next round proves the GPU again.
    write_machine(dir, "");
    wait_or_fail(dir, [&] { return contexts() > opened && !busy_metric(); }, "a new proof once idle");
    CHECK(label(labels, "provision/validated") == "true");
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    reliability::record("repeat", "--repeat while a job holds the GPU (NVML: one other process, 79000 MiB), then leaves",
                        "no context on the busy GPU; validated=true from the last proof with validated.timestamp and "
                        "provision_proof_timestamp_seconds; health degraded (memory_in_use); proved again once idle",
                        "nothing (the job's memory is left alone)");
}

TEST_CASE("--repeat: the driver's Xid events between rounds, where the kernel's log cannot be read",
          "[publish][repeat][xid]") {
    TempDir dir;
    write_machine(dir, "");
    const std::string out = dir.file("stdout");
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", dir.file("machine.toml")},
                                              {"PROVISION_TEST_KMSG", dir.file("no-kernel-log")},
                                              {"PROVISION_DETECT_TIMEOUT", "20"}};
    publish_test::Background provision({PROVISION_BINARY, "--repeat", "0.05", "--json", "--no-validate",
                                        "--site-packages", e2e::site_packages("torch-only")},
                                       env, dir.file("provision.log"), {publish_test::StdoutTo::file, out});
    REQUIRE(provision.pid() > 0);
    // The last whole report on stdout.
    const auto last_report = [&] {
        const std::string text = std::filesystem::exists(out) ? e2e::read_file(out) : "";
        const auto end = text.rfind('\n');
        if (end == std::string::npos) return nlohmann::json();
        const auto start = text.rfind('\n', end - 1);
        return nlohmann::json::parse(text.substr(start == std::string::npos ? 0 : start + 1,
                                                 end - (start == std::string::npos ? 0 : start + 1)));
    };
    wait_or_fail(dir, [&] { return last_report().contains("gpus"); }, "a round's report");
    auto report = last_report();
    // Watched, none yet: an empty list, and since when.
    CHECK(report["gpus"][0]["health"]["xids"] == nlohmann::json::array());
    CHECK(report["driver"]["xid_events_since"].get<std::int64_t>() <= std::time(nullptr));
    CHECK(e2e::has(report["driver"]["kernel_log_unread"].get<std::string>(), "no-kernel-log cannot be read"));

    // The driver raises Xid 79 on the GPU: a later round has it, and fails.
    std::string text = e2e::read_file(dir.file("machine.toml"));
    text += "\n[faults]\nxid_events = [{ gpu = 0, xid = 79 }]\n";
    e2e::write_file(dir.file(".machine.next"), text);
    std::filesystem::rename(dir.file(".machine.next"), dir.file("machine.toml"));
    wait_or_fail(dir, [&] { return last_report()["verdict"] == "failed"; }, "a round with the Xid");
    report = last_report();
    REQUIRE(report["gpus"][0]["health"]["xids"].size() == 1);
    CHECK(report["gpus"][0]["health"]["xids"][0]["xid"] == 79);
    // And every round after it, until provision restarts.
    const std::size_t lines_now = rounds_in(out);
    wait_or_fail(dir, [&] { return rounds_in(out) >= lines_now + 2; }, "two more rounds");
    CHECK(last_report()["gpus"][0]["health"]["xids"].size() == 1);
    CHECK(provision.stop(SIGTERM, 5s) == 143);
    reliability::record("repeat", "--repeat with the kernel log unreadable; the driver raises Xid 79 mid-run",
                        "each round's xids are NVML's events since the watch began (said in driver.xid_events_since); "
                        "the round after the event has Xid 79 and fails, and so do the rounds after it",
                        "nothing");
}
