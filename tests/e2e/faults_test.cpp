// Driver faults and GPU health signals end to end: the built binary runs on
// the fake NVML and libcuda of tests/fake_nvml (PROVISION_NVML_LIBRARY,
// PROVISION_CUDA_LIBRARY) acting out a machine, or on a --gpu-fixture with
// [gpus.health]; the recipes' [policy] decides between degraded and failed.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

const char* h100_gpu =
    "[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
    "uuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n";

// One H100 with `health` as its [gpus.health] table (and `faults` as [faults]).
std::string write_h100(const TempDir& dir, const std::string& health, const std::string& faults = "") {
    std::string text = fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n{}", h100_gpu);
    if (!health.empty()) text += "\n[gpus.health]\n" + health + "\n";
    if (!faults.empty()) text += "\n[faults]\n" + faults + "\n";
    const std::string path = dir.file(fmt::format("machine-{}.toml", std::hash<std::string>{}(health + faults)));
    e2e::write_file(path, text);
    return path;
}

std::string fake_machine(const std::string& name) { return e2e::source_path("tests/fake_nvml/machines/" + name); }

struct Drivers {
    std::string nvml = FAKE_NVML_LIBRARY;
    std::string cuda = FAKE_CUDA_LIBRARY;
};

// provision on the fake drivers acting out `machine`: all packages, no GPU
// validation (the fake GPUs cannot run kernels), the env file in `dir`.
// Detection's limit is 5 s: a healthy fake answers well within it on any
// machine, and the fakes that hang do so for 20 s.
e2e::Result run_on_fake_driver(const TempDir& dir, const std::string& machine, const Drivers& drivers = {},
                               std::vector<std::string> extra = {}, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"--no-validate", "--json", "--site-packages", e2e::site_packages("all"),
                                     "--env-file", dir.file(".env_settings")};
    args.insert(args.end(), extra.begin(), extra.end());
    env.insert({{"PROVISION_NVML_LIBRARY", drivers.nvml},
                {"PROVISION_CUDA_LIBRARY", drivers.cuda},
                {"PROVISION_FAKE_GPU_FIXTURE", machine},
                {"PROVISION_DETECT_TIMEOUT", "5"}});
    return e2e::provision(args, env);
}

// Two healthy H100s (the fake NVML puts GPU 0 at bus 0x18, GPU 1 at 0x20),
// with `log` standing in for the kernel's log.
e2e::Result run_with_kernel_log(const TempDir& dir, const std::string& log) {
    std::string machine = fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n{}", h100_gpu);
    machine += "\n[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
               "uuid = \"GPU-1e2c3b4a-d72c-4106-c12f-20bd9faed9f7\"\n";
    e2e::write_file(dir.file("two-h100.toml"), machine);
    e2e::write_file(dir.file("kmsg"), log);
    return run_on_fake_driver(dir, dir.file("two-h100.toml"), {}, {}, {{"PROVISION_TEST_KMSG", dir.file("kmsg")}});
}

// The finding for `signal` in the report, or null.
nlohmann::json finding(const nlohmann::json& report, const std::string& signal) {
    for (const auto& entry : report["findings"])
        if (entry["signal"] == signal) return entry;
    return nullptr;
}

struct Expected {
    int exit_code;
    std::string verdict;
    std::string mechanism;  // "" when none is reported
    std::size_t gpus;
};

// Checks the outcome every fault test asserts; returns the parsed report.
nlohmann::json check_outcome(const e2e::Result& result, const TempDir& dir, const Expected& expected) {
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == expected.exit_code);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == expected.verdict);
    CHECK(report["selected"]["mechanism"] == expected.mechanism);
    CHECK(report["gpus"].size() == expected.gpus);
    // A failed run leaves no env file; one that proceeds writes it.
    CHECK(std::filesystem::exists(dir.file(".env_settings")) == (expected.verdict != "failed"));
    return report;
}

void check_finding(const e2e::Result& result, const nlohmann::json& report, const std::string& signal,
                   const std::string& level, const std::string& words) {
    INFO("stderr: " << result.err);
    const auto entry = finding(report, signal);
    REQUIRE_FALSE(entry.is_null());
    CHECK(entry["level"] == level);
    CHECK(entry["message"].get<std::string>().find(words) != std::string::npos);
    // The human summary says the same.
    CHECK(result.err.find(fmt::format("health ({}): ", level)) != std::string::npos);
    CHECK(result.err.find(words) != std::string::npos);
}

}  // namespace

TEST_CASE("driver fault: NVML missing is a CPU-only machine", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, fake_machine("version-mismatch.toml"),
                                           {"/nonexistent/libnvidia-ml.so.1", "/nonexistent/libcuda.so.1"});
    const auto report = check_outcome(result, dir, {0, "ok", "eager", 0});
    check_finding(result, report, "nvml_missing", "ok", "NVML (/nonexistent/libnvidia-ml.so.1) is not available");
    reliability::record("driver", "NVML and libcuda missing (no NVIDIA driver in the container)",
                        "exit 0, verdict ok, CPU-only, eager; finding nvml_missing (ok)");
}

TEST_CASE("driver fault: NVML missing while libcuda works", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, e2e::gpu_fixture("h100"), {"/nonexistent/libnvidia-ml.so.1"});
    const auto report = check_outcome(result, dir, {0, "ok", "flash3", 1});
    check_finding(result, report, "nvml_missing", "ok", "is not available");
    // Nothing read; the Xids not read either (no bus id to match the kernel's log with), and said so.
    CHECK(report["gpus"][0]["health"] == nlohmann::json{{"xids", "not-read"}});
    reliability::record("driver", "NVML missing, libcuda works (H100)",
                        "exit 0, verdict ok, flash3 from libcuda's view; finding nvml_missing (ok)",
                        "the health signals (NVML reads them)");
}

TEST_CASE("driver fault: the kernel driver is not loaded", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, fake_machine("driver-not-loaded.toml"));
    const auto report = check_outcome(result, dir, {0, "degraded", "eager", 0});
    check_finding(result, report, "driver_not_loaded", "degraded", "the NVIDIA kernel driver is not loaded");
    reliability::record("driver", "NVML init fails: driver not loaded (libcuda fails too)",
                        "exit 0, verdict degraded, CPU-only, eager; finding driver_not_loaded says the kernel "
                        "driver is not loaded",
                        "the GPU");
}

TEST_CASE("driver fault: driver/library version mismatch", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, fake_machine("version-mismatch.toml"));
    const auto report = check_outcome(result, dir, {0, "degraded", "eager", 0});
    check_finding(result, report, "version_mismatch", "degraded", "driver/library version mismatch");
    reliability::record("driver", "NVML init fails: driver/library version mismatch (libcuda fails too)",
                        "exit 0, verdict degraded, CPU-only, eager; finding version_mismatch names the mismatch",
                        "the GPU");
}

TEST_CASE("driver fault: a GPU that is lost fails the run; the policy can make it degraded", "[faults][driver]") {
    SECTION("built-in policy") {
        TempDir dir;
        const auto result = run_on_fake_driver(dir, fake_machine("gpu-lost.toml"));
        const auto report = check_outcome(result, dir, {5, "failed", "flash3", 1});
        check_finding(result, report, "gpu_lost", "failed", "NVML's GPU 1 has fallen off the bus");
        CHECK(finding(report, "gpu_lost")["nvml_index"] == 1);
        reliability::record("driver", "GPU 1 of 2 lost (NVML_ERROR_GPU_IS_LOST, libcuda omits it)",
                            "exit 5, verdict failed, no env file; finding gpu_lost says it fell off the bus",
                            "the run (the node needs a reset)");
    }
    SECTION("user policy: gpu_lost = degraded") {
        TempDir dir;
        e2e::write_file(dir.file("policy.toml"), "[policy]\ngpu_lost = \"degraded\"\n");
        const auto result =
            run_on_fake_driver(dir, fake_machine("gpu-lost.toml"), {}, {"--recipe", dir.file("policy.toml")});
        const auto report = check_outcome(result, dir, {0, "degraded", "flash3", 1});
        check_finding(result, report, "gpu_lost", "degraded", "fallen off the bus");
        reliability::record("driver", "GPU 1 of 2 lost, with a recipe policy gpu_lost = \"degraded\"",
                            "exit 0, verdict degraded, flash3 on the remaining H100", "the lost GPU");
    }
}

TEST_CASE("driver fault: a library without NVML's functions (a missing symbol)", "[faults][driver]") {
    TempDir dir;
    // libfake_cuda has none of NVML's functions: nvmlInit_v2 is missing.
    const auto result = run_on_fake_driver(dir, e2e::gpu_fixture("h100"), {FAKE_CUDA_LIBRARY, FAKE_CUDA_LIBRARY});
    const auto report = check_outcome(result, dir, {0, "degraded", "flash3", 1});
    check_finding(result, report, "nvml_too_old", "degraded", "lacks nvmlInit_v2");
    reliability::record("driver", "NVML lacks a required function (nvmlInit_v2)",
                        "exit 0, verdict degraded, flash3 from libcuda's view; finding nvml_too_old names the "
                        "function",
                        "the health signals");
}

TEST_CASE("driver fault: an older driver without the optional functions", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, e2e::gpu_fixture("h100"), {FAKE_NVML_OLD_LIBRARY, FAKE_CUDA_OLD_LIBRARY});
    const auto report = check_outcome(result, dir, {0, "ok", "flash3", 1});
    CHECK(report["findings"].empty());
    // Only the old memory call answers; its 480 MiB reservation stays under the limit.
    CHECK(report["gpus"][0]["health"] == nlohmann::json{{"memory_used_mib", 480}, {"xids", "not-read"}});
    reliability::record("driver", "older driver: NVML without the health and compute-capability functions",
                        "exit 0, verdict ok, flash3; health signals left out of the report",
                        "the health signals");
}

TEST_CASE("driver fault: one call fails for one GPU of two", "[faults][driver]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, fake_machine("one-call-fails.toml"));
    const auto report = check_outcome(result, dir, {0, "degraded", "flash2", 2});
    check_finding(result, report, "gpu_unreadable", "degraded", "NVML's GPU 1 could not be read");
    CHECK(finding(report, "gpu_unreadable")["gpu"] == 1);
    reliability::record("driver", "nvmlDeviceGetMemoryInfo fails for GPU 1 of 2",
                        "exit 0, verdict degraded, flash2 on both GPUs; finding gpu_unreadable names the call",
                        "GPU 1's health signals");
}

TEST_CASE("driver fault: NVML hangs", "[faults][driver]") {
    TempDir dir;
    const auto start = std::chrono::steady_clock::now();
    const auto result = run_on_fake_driver(dir, fake_machine("nvml-hangs.toml"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto report = check_outcome(result, dir, {0, "degraded", "flash3", 1});
    check_finding(result, report, "nvml_hang", "degraded", "NVML did not answer within the time limit");
    CHECK(seconds < 15);  // the hang lasts 20 s; the limit is 5 s
    reliability::record("driver", "nvmlInit_v2 hangs (20 s) with PROVISION_DETECT_TIMEOUT=5",
                        "exit 0 once the 5 s limit passed, verdict degraded, flash3 from libcuda's view; finding "
                        "nvml_hang",
                        "the health signals");
}

TEST_CASE("driver fault: libcuda fails or hangs while NVML works", "[faults][driver]") {
    for (const auto& [machine, what] : std::vector<std::pair<std::string, std::string>>{
             {"cuda-init-fails.toml", "cuInit fails (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)"},
             {"cuda-hangs.toml", "cuInit hangs (20 s) with PROVISION_DETECT_TIMEOUT=5"}}) {
        INFO(machine);
        TempDir dir;
        const auto result = run_on_fake_driver(dir, fake_machine(machine));
        const auto report = check_outcome(result, dir, {0, "degraded", "flash2", 2});
        check_finding(result, report, "cuda_problem", "degraded", "the CUDA driver (libcuda) failed");
        reliability::record("driver", what, "exit 0, verdict degraded, flash2 from NVML's view; finding cuda_problem");
    }
}

TEST_CASE("health: a healthy GPU reports every signal and verdict ok", "[faults][health]") {
    TempDir dir;
    const auto result = run_on_fake_driver(dir, write_h100(dir, ""));
    const auto report = check_outcome(result, dir, {0, "ok", "flash3", 1});
    CHECK(report["findings"].empty());
    const auto& health = report["gpus"][0]["health"];
    CHECK(health["uncorrected_ecc_errors"] == 0);
    CHECK(health["row_remap_failure"] == false);
    CHECK(health["thermal_slowdown"] == false);
    CHECK(health["memory_used_mib"] == 0);
    CHECK(health["other_processes"] == 0);
    CHECK(health["mig_mode"] == false);
    CHECK(health["compute_mode"] == "default");
    CHECK(health["uncorrectable_remapped_rows"] == 0);
    CHECK(health["xids"] == nlohmann::json::array());  // the kernel's log read (here empty): none
    CHECK(health.size() == 13);
}

TEST_CASE("health: each signal lands in the report and the policy sets the verdict", "[faults][health]") {
    struct Row {
        std::string health;      // the [gpus.health] table
        std::string signal;      // the finding expected
        std::string report_key;  // the health field in the report
        nlohmann::json value;
        std::string level;
        std::string words;
    };
    const std::vector<Row> rows = {
        {"uncorrected_ecc_errors = 2", "uncorrected_ecc", "uncorrected_ecc_errors", 2, "failed",
         "has had 2 uncorrected ECC memory errors since the driver loaded"},
        {"row_remap_failure = true", "row_remap_failure", "row_remap_failure", true, "failed",
         "could not remap a faulty memory row"},
        {"retired_pages_pending = true", "retired_pages_pending", "retired_pages_pending", true, "degraded",
         "faulty memory pages waiting to be retired"},
        {"row_remap_pending = true", "row_remap_pending", "row_remap_pending", true, "degraded",
         "faulty memory row waiting to be remapped"},
        {"thermal_slowdown = true", "thermal_slowdown", "thermal_slowdown", true, "degraded",
         "slowing its clocks because it is too hot"},
        {"power_brake_slowdown = true", "power_brake_slowdown", "power_brake_slowdown", true, "degraded",
         "held back by the power brake"},
        {"hw_slowdown = true", "hw_slowdown", "hw_slowdown", true, "degraded", "slowed by a hardware protection"},
        {"memory_used_mib = 20480\nother_processes = 2", "memory_in_use", "memory_used_mib", 20480, "degraded",
         "already has 20480 MiB of memory in use by 2 other processes"},
        {"mig_mode = true", "mig_mode", "mig_mode", true, "degraded", "is in MIG mode"},
    };
    for (const auto& row : rows) {
        for (const bool through_nvml : {true, false}) {
            INFO(row.signal << (through_nvml ? " through the fake NVML" : " through --gpu-fixture"));
            TempDir dir;
            const std::string machine = write_h100(dir, row.health);
            const auto result =
                through_nvml ? run_on_fake_driver(dir, machine)
                             : e2e::provision({"--gpu-fixture", machine, "--json", "--site-packages",
                                               e2e::site_packages("all"), "--env-file", dir.file(".env_settings")});
            const bool failed = row.level == "failed";
            const auto report = check_outcome(result, dir, {failed ? 5 : 0, row.level, "flash3", 1});
            check_finding(result, report, row.signal, row.level, row.words);
            CHECK(finding(report, row.signal)["gpu"] == 0);
            CHECK(report["gpus"][0]["health"][row.report_key] == row.value);
            CHECK(report["findings"].size() == 1);
            if (through_nvml)
                reliability::record("health", fmt::format("NVML reports {}", row.health),
                                    fmt::format("exit {}, verdict {}, finding {}{}", failed ? 5 : 0, row.level,
                                                row.signal, failed ? ", no env file" : ", flash3"),
                                    failed ? "the run (the GPU is deemed unhealthy)" : "nothing");
        }
    }
}

TEST_CASE("health: a signal the GPU does not support is left out, not a fault", "[faults][health]") {
    TempDir dir;
    const auto result = run_on_fake_driver(
        dir, write_h100(dir, "uncorrected_ecc_errors = 2",
                        "failing_calls = [{ function = \"nvmlDeviceGetTotalEccErrors\", gpu = 0, error = 3 }]"));
    const auto report = check_outcome(result, dir, {0, "ok", "flash3", 1});
    CHECK_FALSE(report["gpus"][0]["health"].contains("uncorrected_ecc_errors"));
    CHECK(report["findings"].empty());
    reliability::record("health", "nvmlDeviceGetTotalEccErrors answers NVML_ERROR_NOT_SUPPORTED (GPU without ECC)",
                        "exit 0, verdict ok; the ECC count is left out of the report", "the ECC signal");
}

namespace {

// A child process that names itself `name` (the kernel's comm) and waits to
// be killed: what NVML's process list points at.
struct NamedProcess {
    pid_t pid = -1;
    explicit NamedProcess(const char* name) {
        pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_NAME, name, 0, 0, 0);
            for (;;) ::pause();
        }
        // Named before the run reads it: wait until /proc says so.
        for (int i = 0; i < 500 && e2e::read_file("/proc/" + std::to_string(pid) + "/comm") != std::string(name) + "\n";
             ++i)
            ::usleep(2000);
    }
    ~NamedProcess() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

std::string listed(const NamedProcess& process, int mib) {
    return fmt::format("{{ pid = {}, mib = {} }}", process.pid, mib);
}

}  // namespace

TEST_CASE("health: provision's own worker on the GPU is no other process sharing it", "[faults][health]") {
    // A finished run's validation worker tears its context down after that
    // run has ended, and the next run finds it in NVML's process list; the
    // worker names itself "provision-gpu".
    const NamedProcess worker("provision-gpu");
    REQUIRE(worker.pid > 0);
    SECTION("alone: not counted, its memory not in use") {
        TempDir dir;
        const auto result = run_on_fake_driver(
            dir, write_h100(dir, "memory_used_mib = 1400", "listed_processes = [" + listed(worker, 600) + "]"));
        const auto report = check_outcome(result, dir, {0, "ok", "flash3", 1});
        CHECK(report["findings"].empty());
        CHECK(report["gpus"][0]["health"]["other_processes"] == 0);
        CHECK(report["gpus"][0]["health"]["memory_used_mib"] == 800);
        CHECK_THAT(result.err, Catch::Contains("1 of provision's own validation workers (600 MiB) not counted"));
        reliability::record("health",
                            "NVML lists a process named provision-gpu (a finished run's worker tearing down) on the "
                            "GPU, 600 of 1400 MiB in use",
                            "exit 0, verdict ok; not counted as sharing the GPU, its memory left out (800 MiB); a "
                            "note says so",
                            "nothing");
    }
    SECTION("beside a process of someone else's: that one still counts") {
        const NamedProcess other("python3");
        TempDir dir;
        const auto result = run_on_fake_driver(
            dir, write_h100(dir, "memory_used_mib = 1400",
                            "listed_processes = [" + listed(worker, 600) + ", " + listed(other, 700) + "]"));
        const auto report = check_outcome(result, dir, {0, "degraded", "flash3", 1});
        check_finding(result, report, "memory_in_use", "degraded",
                      "already has 800 MiB of memory in use by 1 other process");
        CHECK(report["gpus"][0]["health"]["other_processes"] == 1);
    }
}

TEST_CASE("health: a user policy changes what a signal weighs", "[faults][health]") {
    TempDir dir;
    e2e::write_file(dir.file("policy.toml"),
                    "[policy]\nuncorrected_ecc = \"degraded\"\nthermal_slowdown = \"failed\"\n");
    SECTION("uncorrected ECC errors tolerated") {
        const auto result = run_on_fake_driver(dir, write_h100(dir, "uncorrected_ecc_errors = 1"), {},
                                               {"--recipe", dir.file("policy.toml")});
        const auto report = check_outcome(result, dir, {0, "degraded", "flash3", 1});
        check_finding(result, report, "uncorrected_ecc", "degraded", "1 uncorrected ECC memory error since");
        reliability::record("health", "uncorrected ECC errors, with a recipe policy uncorrected_ecc = \"degraded\"",
                            "exit 0, verdict degraded, flash3");
    }
    SECTION("a hot GPU refused") {
        const auto result = run_on_fake_driver(dir, write_h100(dir, "thermal_slowdown = true"), {},
                                               {"--recipe", dir.file("policy.toml")});
        const auto report = check_outcome(result, dir, {5, "failed", "flash3", 1});
        check_finding(result, report, "thermal_slowdown", "failed", "too hot");
        reliability::record("health", "thermal slowdown, with a recipe policy thermal_slowdown = \"failed\"",
                            "exit 5, verdict failed, no env file", "the run (the GPU is deemed unhealthy)");
    }
}

TEST_CASE("health: a failed GPU starts no workload", "[faults][health]") {
    TempDir dir;
    const std::string marker = dir.file("started");
    const auto result = run_on_fake_driver(dir, write_h100(dir, "row_remap_failure = true"), {},
                                           {"--", "/bin/sh", "-c", "touch " + marker});
    CHECK(result.exit_code == 5);
    CHECK_FALSE(std::filesystem::exists(marker));
    CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
    reliability::record("health", "row remapping failure, with a workload command",
                        "exit 5, the command is not started, no env file", "the run (the GPU is deemed unhealthy)");
}

TEST_CASE("health: a bad [gpus.health] in a fixture is an error naming file:line:column", "[faults][health]") {
    TempDir dir;
    const auto result = e2e::provision({"--gpu-fixture", write_h100(dir, "mig_mode = \"yes\""), "--json"});
    CHECK(result.exit_code == 3);
    CHECK(result.err.find(":12:12: 'mig_mode' in the health table of [[gpus]] entry 1 must be true or false") !=
          std::string::npos);
}

TEST_CASE("NVML: shut down before a workload starts and left to the exit of a run that ends at its report",
          "[faults][driver]") {
    TempDir dir;
    const std::string log = dir.file("nvml-shutdowns.log");
    const std::string machine = write_h100(dir, "");
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"--no-validate", "--site-packages", e2e::site_packages("all")};
        args.insert(args.end(), extra.begin(), extra.end());
        return e2e::provision(args, {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                     {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                     {"PROVISION_FAKE_GPU_FIXTURE", machine},
                                     {"PROVISION_FAKE_NVML_SHUTDOWN_LOG", log},
                                     {"PROVISION_DETECT_TIMEOUT", "5"}});
    };
    SECTION("a run without a workload: its exit closes NVML") {
        const auto result = run({"--check"});
        INFO("stderr: " << result.err);
        CHECK(result.exit_code == 0);
        CHECK_FALSE(std::filesystem::exists(log));
    }
    SECTION("a workload: NVML is shut down before the exec, so none of its descriptors reach the workload") {
        // The workload reads the log: the shutdown came before it started.
        const auto result = run({"--", "/bin/sh", "-c", "cat " + log});
        INFO("stderr: " << result.err);
        CHECK(result.exit_code == 0);
        CHECK(result.out.find("nvmlShutdown") != std::string::npos);
    }
}

TEST_CASE("PCIe: the link is read from the GPU's own sysfs entry where it is NVIDIA's and from NVML otherwise",
          "[faults][driver]") {
    TempDir dir;
    // NVML says x16 of x16; the sysfs entry at the bus id NVML gives (the fake's GPU 0: 0000:18:00.0) says x8.
    const std::string machine = dir.file("machine.toml");
    e2e::write_file(machine, fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n{}"
                                         "pcie = {{ generation = 5, width = 16, max_generation = 5, max_width = 16 }}\n",
                                         h100_gpu));
    const std::filesystem::path device = std::filesystem::path(dir.file("sys")) / "bus/pci/devices/0000:18:00.0";
    std::filesystem::create_directories(device);
    auto write = [&](const char* name, const char* text) { e2e::write_file((device / name).string(), text); };
    write("current_link_speed", "32.0 GT/s PCIe\n");
    write("max_link_speed", "32.0 GT/s PCIe\n");
    write("current_link_width", "8\n");
    write("max_link_width", "16\n");
    auto run = [&] {
        return e2e::provision({"--no-validate", "--json", "--site-packages", e2e::site_packages("all")},
                              {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                               {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                               {"PROVISION_FAKE_GPU_FIXTURE", machine},
                               {"PROVISION_TEST_SYSFS", dir.file("sys")},
                               {"PROVISION_DETECT_TIMEOUT", "5"}});
    };
    SECTION("an NVIDIA device there: its registers") {
        write("vendor", "0x10de\n");
        const auto result = run();
        INFO("stderr: " << result.err);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["pcie"]["width"] == 8);
        const auto degraded = finding(report, "pcie_degraded");
        REQUIRE_FALSE(degraded.is_null());
        CHECK(degraded["message"].get<std::string>().find("x8 of x16") != std::string::npos);
    }
    SECTION("another device there (not the GPU): NVML's reading") {
        write("vendor", "0x8086\n");
        const auto result = run();
        INFO("stderr: " << result.err);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["pcie"]["width"] == 16);
        CHECK(finding(report, "pcie_degraded").is_null());
    }
}

TEST_CASE("health: a long kernel log keeps every GPU's critical Xid, and says it was cut", "[faults][health][xid]") {
    const std::string fallen = "3,900001,900001,-;NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n";
    SECTION("1,000 application Xids on GPU 1, then Xid 79 on GPU 0") {
        TempDir dir;
        std::string log;
        for (int i = 0; i < 1000; ++i)
            log += fmt::format("4,{},{},-;NVRM: Xid (PCI:0000:20:00): 45, pid={}, Ch 00000008\n", i, i, 1000 + i);
        const auto result = run_with_kernel_log(dir, log + fallen);
        const auto report = check_outcome(result, dir, {5, "failed", "flash3", 2});
        check_finding(result, report, "xid_critical", "failed", "Xid 79 (GPU has fallen off the bus)");
        CHECK(finding(report, "xid_critical")["gpu"] == 0);
        CHECK(report["gpus"][0]["health"]["xids"].size() == 1);
        CHECK(report["gpus"][1]["health"]["xids"].size() == 1000);
    }
    SECTION("1,500 application Xids: the newest and the first of each kind kept, the cut said") {
        TempDir dir;
        std::string log;
        for (int i = 0; i < 1500; ++i)
            log += fmt::format("4,{},{},-;NVRM: Xid (PCI:0000:20:00): 45, pid={}, Ch 00000008\n", i, i, 1000 + i);
        const auto result = run_with_kernel_log(dir, log + fallen);
        const auto report = check_outcome(result, dir, {5, "failed", "flash3", 2});
        CHECK(report["gpus"][0]["health"]["xids"][0]["xid"] == 79);
        const auto& xids = report["gpus"][1]["health"]["xids"];
        REQUIRE(xids.size() == 1001);
        CHECK(xids[0]["message"] == "pid=1000, Ch 00000008");  // the first of its kind
        CHECK(xids[1000]["message"] == "pid=2499, Ch 00000008");  // the newest
        CHECK(e2e::has(result.err, "the kernel's log was cut: 499 of its Xid events were left out"));
    }
    SECTION("200,000 unrelated records, then Xid 79") {
        TempDir dir;
        std::string log;
        for (int i = 0; i < 200000; ++i) log += fmt::format("6,{},{},-;usb 1-1: reset high-speed USB device\n", i, i);
        const auto result = run_with_kernel_log(dir, log + fallen);
        const auto report = check_outcome(result, dir, {5, "failed", "flash3", 2});
        check_finding(result, report, "xid_critical", "failed", "Xid 79");
    }
    reliability::record("health", "a kernel log of 1,000 application Xids (45) on GPU 1, or 200,000 other records, "
                                  "then Xid 79 on GPU 0",
                        "failed, exit 5, xid_critical on GPU 0; past 1,000 events the first of each Xid on each GPU "
                        "and the newest are kept, and a note says how many were left out");
}

TEST_CASE("health: Xid words the driver did not write are no Xid", "[faults][health][xid]") {
    TempDir dir;
    // execve with an empty argv (kernel 5.18 and newer logs the path), a USB
    // product string, NUL bytes before the mark, a process writing to /dev/kmsg.
    std::string log = "4,1,1,-;process 'sh' launched '/tmp/NVRM: Xid (PCI:0000:18:00): 79, x' with NULL argv: empty "
                      "string added\n"
                      "6,2,2,-;usb 1-1: Product: NVRM: Xid (PCI:0000:18:00): 79, x\n"
                      "12,3,3,-;NVRM: Xid (PCI:0000:18:00): 79, written by a process\n";
    log += std::string(3, '\0') + "NVRM: Xid (PCI:0000:18:00): 79, after NUL bytes\n";
    const auto result = run_with_kernel_log(dir, log);
    const auto report = check_outcome(result, dir, {0, "ok", "flash3", 2});
    CHECK(finding(report, "xid_critical").is_null());
    CHECK(report["gpus"][0]["health"]["xids"] == nlohmann::json::array());
    reliability::record("health", "the kernel log quotes 'NVRM: Xid (...): 79' inside other records (an execve path, "
                                  "a USB product string, after NUL bytes, written by a process)",
                        "ok, exit 0: only a record of the kernel's own whose message begins with the mark is an Xid");
}
