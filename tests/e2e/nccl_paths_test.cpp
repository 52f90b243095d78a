// The workload's NCCL and the paths it takes, end to end on the fakes: a
// venv whose torch carries an nvidia-nccl-cu13 wheel (or none, or the
// system's NCCL through the loader's folders), a fake libnccl.so.2 holding
// only NCCL's build string, and the fake libcuda acting out cuMem sharing
// (a real descriptor sent to the peer worker over its UNIX socket), legacy
// IPC and host NUMA memory, each able to fail as containers make them fail.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <csignal>
#include <cstdio>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "nccl_venv.h"
#include "network/rendezvous.h"
#include "support/proc_file.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::skip_without_prerequisites;
using e2e::test_data;
using e2e::torch_venv;
using e2e::findings_of;
using e2e::has;

namespace {

namespace fs = std::filesystem;

// Two H100s joined by NV18, driver 580 (CUDA 13.0), with `faults` for the
// fakes and `gpu0_health` as GPU 0's [gpus.health].
std::string machine(const TempDir& dir, const std::string& faults, const std::string& gpu0_health = "") {
    std::string text = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";
    for (int gpu = 0; gpu < 2; ++gpu) {
        text += fmt::format("\n[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\n"
                            "memory_mib = 81559\nuuid = \"GPU-{}0000000-0000-4000-8000-000000000000\"\nnvlinks = 18\n",
                            gpu + 1);
        if (gpu == 0 && !gpu0_health.empty()) text += "[gpus.health]\n" + gpu0_health + "\n";
    }
    text += "\n[[links]]\ngpus = [0, 1]\ntopology = \"NV18\"\np2p = \"ok\"\n";
    if (!faults.empty()) text += "\n[faults]\n" + faults + "\n";
    const std::string path = dir.file("machine.toml");
    e2e::write_file(path, text);
    return path;
}

e2e::Result run(const TempDir& dir, const std::string& python, const std::string& machine_file,
                std::map<std::string, std::string> extra = {}, std::vector<std::string> args = {}) {
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", machine_file},
                                              {"PROVISION_TEST_WORKER", "simulate"},
                                              {"PROVISION_DETECT_TIMEOUT", "10"},
                                              {"PATH", dir.file("no-bin")},
                                              {"HOME", dir.file("no-home")}};
    for (auto& [name, value] : extra) env[name] = value;
    std::vector<std::string> all = {"--check", "--json", "--python", python, "--env-file", dir.file("env")};
    all.insert(all.end(), args.begin(), args.end());
    return e2e::provision(all, env);
}

// The NCCL variables the env file sets (those it leaves unset are left out).
std::map<std::string, std::string> nccl_settings(const TempDir& dir) {
    auto values = e2e::source_env_file(dir.file("env"), {"NCCL_CUMEM_ENABLE", "NCCL_CUMEM_HOST_ENABLE",
                                                          "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"});
    std::erase_if(values, [](const auto& entry) { return entry.second.empty(); });
    return values;
}

}  // namespace

TEST_CASE("nccl: the wheel beside torch is read, and the pair is checked the way it shares memory", "[nccl]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true), machine(dir, ""), {}, {"--explain"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    REQUIRE(report.contains("nccl"));
    CHECK(report["nccl"]["version"] == "2.28.9");
    CHECK(report["nccl"]["cuda"] == "13.0");  // the build string, not the RAS banner beside it
    CHECK(report["nccl"]["source"] == "wheel");
    CHECK(has(report["nccl"]["path"].get<std::string>(), "/site-packages/nvidia/nccl/lib/libnccl.so.2"));
    CHECK(report["nccl"]["peer_path"] == "cumem-fd");
    CHECK(report["nccl"]["host_memory"] == "cumem");
    REQUIRE(report["links"].size() == 1);
    CHECK(report["links"][0]["check"]["status"] == "passed");
    CHECK(report["links"][0]["check"]["path"] == "cumem-fd");
    CHECK_FALSE(report["links"][0]["check"].contains("failed_path"));
    for (const auto& gpu : report["gpus"]) {
        CHECK(gpu["nccl_host_memory"]["status"] == "passed");
        CHECK(gpu["nccl_host_memory"]["numa_node"] == 0);
    }
    CHECK(report["verdict"] == "ok");
    CHECK(nccl_settings(dir).empty());
    CHECK(has(result.err, "NCCL: 2.28.9 (wheel, built for CUDA 13.0"));
    CHECK(has(result.err, "peer memory: cumem-fd (NCCL 2.28.9 shares peer memory through cuMem by default"));
}

TEST_CASE("nccl: an old NCCL of the system's takes legacy IPC, and none checks nothing of cuMem", "[nccl]") {
    if (skip_without_prerequisites()) return;
    SECTION("the system's NCCL 2.18.5, found through the loader's folders") {
        TempDir dir;
        const std::string system = dir.file("system-lib");
        fs::create_directories(system);
        fs::copy_file(test_data("nccl/system/nccl_system.so"), system + "/libnccl.so.2");
        const auto result = run(dir, torch_venv(dir, false), machine(dir, ""), {{"PROVISION_TEST_SYSTEM_LIBRARIES", system}});
        INFO(result.err);
        const auto report = e2e::report(result);
        CHECK(report["nccl"]["version"] == "2.18.5");
        CHECK(report["nccl"]["cuda"] == "12.2");
        CHECK(report["nccl"]["source"] == "system");
        CHECK(report["nccl"]["peer_path"] == "legacy-ipc");
        CHECK(report["nccl"]["host_memory"] == "shm");
        CHECK(report["links"][0]["check"]["path"] == "legacy-ipc");
        CHECK(report["links"][0]["check"]["status"] == "passed");
        CHECK_FALSE(report["gpus"][0].contains("nccl_host_memory"));
    }
    SECTION("NCCL_CUMEM_ENABLE=0 in the environment") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, ""), {{"NCCL_CUMEM_ENABLE", "0"}});
        INFO(result.err);
        const auto report = e2e::report(result);
        CHECK(report["nccl"]["peer_path"] == "legacy-ipc");
        CHECK(report["links"][0]["check"]["path"] == "legacy-ipc");
        CHECK(report["links"][0]["check"]["status"] == "passed");
    }
    SECTION("no NCCL: no nccl entry, the legacy path as CUDA programs take it") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, false), machine(dir, ""));
        INFO(result.err);
        const auto report = e2e::report(result);
        CHECK_FALSE(report.contains("nccl"));
        CHECK(report["links"][0]["check"]["path"] == "legacy-ipc");
        CHECK(result.exit_code == 0);
    }
}

TEST_CASE("nccl: cuMem sharing fails where legacy IPC works: NCCL_CUMEM_ENABLE=0, unless the user set it",
          "[nccl]") {
    if (skip_without_prerequisites()) return;
    const std::string failing = "failing_calls = [{ function = \"cuMemImportFromShareableHandle\", gpu = 1, error = 101 }]";
    SECTION("written") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, failing));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        const auto& check = report["links"][0]["check"];
        CHECK(check["status"] == "passed");
        CHECK(check["path"] == "legacy-ipc");
        CHECK(check["failed_path"]["path"] == "cumem-fd");
        CHECK(has(check["failed_path"]["detail"].get<std::string>(), "cuMemImportFromShareableHandle: CUDA error 101"));
        const auto findings = findings_of(report, "cumem_p2p_failed");
        REQUIRE(findings.size() == 1);
        CHECK(findings[0]["level"] == "degraded");
        CHECK(has(findings[0]["message"].get<std::string>(), "NCCL_CUMEM_ENABLE=0 is written"));
        CHECK(report["verdict"] == "degraded");
        CHECK(nccl_settings(dir) == std::map<std::string, std::string>{{"NCCL_CUMEM_ENABLE", "0"}});
        reliability::record("nccl", "cuMem peer memory cannot be imported (CUDA error 101) where legacy IPC works",
                            "the pair checked again through legacy IPC and passed; cumem_p2p_failed (degraded); "
                            "NCCL_CUMEM_ENABLE=0 written",
                            "the workload, told to take legacy IPC");
    }
    SECTION("the user's own value stays") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, failing), {{"NCCL_CUMEM_ENABLE", "1"}});
        INFO(result.err);
        const auto report = e2e::report(result);
        const auto findings = findings_of(report, "cumem_p2p_failed");
        REQUIRE(findings.size() == 1);
        CHECK(has(findings[0]["message"].get<std::string>(), "the environment's NCCL_CUMEM_ENABLE=1 stays"));
        CHECK(nccl_settings(dir) == std::map<std::string, std::string>{{"NCCL_CUMEM_ENABLE", "1"}});
    }
}

TEST_CASE("nccl: both paths fail: the pair is broken and NCCL is told to leave P2P alone", "[nccl]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true),
                            machine(dir, "failing_calls = [{ function = \"cuMemImportFromShareableHandle\", gpu = 1, "
                                         "error = 101 }, { function = \"cuIpcOpenMemHandle_v2\", gpu = 1, error = 999 }]"));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["links"][0]["state"] == "broken");
    CHECK(report["links"][0]["check"]["path"] == "legacy-ipc");
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(has(broken[0]["message"].get<std::string>(), "after cumem-fd failed"));
    CHECK(findings_of(report, "cumem_p2p_failed").empty());
    CHECK(nccl_settings(dir) == std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}});
    reliability::record("nccl", "cuMem and legacy IPC both fail between two NVLink GPUs",
                        "p2p_broken naming both failures; NCCL_P2P_DISABLE=1 written, no NCCL_CUMEM_ENABLE",
                        "the pair's peer path");
}

TEST_CASE("nccl: cuMem host memory at the NUMA node fails: NCCL_CUMEM_HOST_ENABLE=0", "[nccl]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true),
                            machine(dir, "failing_calls = [{ function = \"cuMemCreate.host_numa\", gpu = 0, error = 217 }]"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["gpus"][0]["nccl_host_memory"]["status"] == "failed");
    CHECK(has(report["gpus"][0]["nccl_host_memory"]["detail"].get<std::string>(), "CUDA error 217"));
    CHECK(report["gpus"][1]["nccl_host_memory"]["status"] == "passed");
    const auto findings = findings_of(report, "cumem_host_failed");
    REQUIRE(findings.size() == 1);
    CHECK(findings[0]["gpu"] == 0);
    const std::string message = findings[0]["message"];
    CHECK(has(message, "NCCL_CUMEM_HOST_ENABLE=0 is written"));
    CHECK(has(message, "would also fall back by itself"));  // 2.28.9 is newer than 2.26.3
    CHECK(nccl_settings(dir) == std::map<std::string, std::string>{{"NCCL_CUMEM_HOST_ENABLE", "0"}});
    reliability::record("nccl", "cuMem host memory at the GPU's NUMA node fails (CUDA error 217)",
                        "cumem_host_failed (degraded); NCCL_CUMEM_HOST_ENABLE=0 written", "the workload's host buffers");
}

TEST_CASE("nccl: an NVSwitch fabric not set up is a failed GPU that names the fabric manager", "[nccl][fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true), machine(dir, "fabric_states = [\"in-progress\", \"completed\"]"));
    INFO(result.err);
    CHECK(result.exit_code == 5);
    const auto report = e2e::report(result);
    CHECK(report["gpus"][0]["fabric"]["state"] == "in-progress");
    CHECK(report["gpus"][1]["fabric"]["state"] == "completed");
    const auto findings = findings_of(report, "fabric_not_ready");
    REQUIRE(findings.size() == 1);
    CHECK(findings[0]["gpu"] == 0);
    CHECK(findings[0]["level"] == "failed");
    CHECK(has(findings[0]["message"].get<std::string>(), "nvidia-fabricmanager"));
    reliability::record("nccl", "a GPU's NVSwitch fabric is still being set up (NVML fabric state in-progress)",
                        "fabric_not_ready (failed) naming the host's nvidia-fabricmanager; exit 5", "the run");
}

TEST_CASE("nccl: CUDA's error 802 names the fabric manager", "[nccl][fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true), machine(dir, "cuda_init_error = 802"));
    INFO(result.err);
    CHECK(result.exit_code == 5);
    const auto report = e2e::report(result);
    CHECK(report["validation"]["status"] == "failed");
    for (const auto& check : report["validation"]["checks"])
        CHECK(has(check["detail"].get<std::string>(), "nvidia-fabricmanager"));
}

TEST_CASE("nccl: the host's NUMA nodes and IOMMU groups, read from sysfs", "[nccl][sysfs]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const std::string sys = dir.file("sys");
    for (const auto& [node, cpus, kb] : {std::tuple{"node0", "0-15", "4812272"}, std::tuple{"node1", "", "1048576"}}) {
        fs::create_directories(sys + "/devices/system/node/" + node);
        e2e::write_file(sys + "/devices/system/node/" + node + "/cpulist", std::string(cpus) + "\n");
        e2e::write_file(sys + "/devices/system/node/" + node + "/meminfo",
                        fmt::format("Node 0 MemTotal:       {} kB\n", kb));
    }
    // The fake NVML puts GPU 0 at 0000:18:00.0 and GPU 1 at 0000:20:00.0.
    for (const char* bus : {"0000:18:00.0", "0000:20:00.0"}) {
        fs::create_directories(sys + "/bus/pci/devices/" + bus + "/iommu_group");
        e2e::write_file(sys + "/bus/pci/devices/" + bus + "/iommu_group/type", "DMA-FQ\n");
    }
    const auto result = run(dir, torch_venv(dir, true), machine(dir, ""),
                            {{"PROVISION_TEST_SYSFS", sys}, {"PROVISION_TEST_FAULT", "link=wrong-bytes"}});
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["container"]["numa_nodes_without_cpus"] == nlohmann::json::array({1}));
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    const std::string message = broken[0]["message"];
    CHECK(has(message, "a translating IOMMU on GPU 0 (0000:18:00.0, IOMMU group type DMA-FQ)"));
    CHECK(has(message, "iommu=pt"));
}

TEST_CASE("nccl: --validate=full all-reduces across the workers with the workload's NCCL", "[nccl][full]") {
    if (skip_without_prerequisites()) return;
    SECTION("passed") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, ""), {}, {"--validate=full", "--explain"});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        const auto& all_reduce = report["nccl"]["all_reduce"];
        CHECK(all_reduce["status"] == "passed");
        CHECK(all_reduce["ranks"] == 2);
        CHECK(all_reduce["bus_gb_per_s"].get<double>() > 0);
        CHECK(has(result.err, "all-reduce over 2 GPUs: passed"));
    }
    SECTION("a rank fails: nccl_all_reduce_failed") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, ""), {{"PROVISION_TEST_FAULT", "nccl=error"}},
                                {"--validate=full"});
        INFO(result.err);
        CHECK(result.exit_code == 5);
        const auto report = e2e::report(result);
        CHECK(report["nccl"]["all_reduce"]["status"] == "error");
        const auto findings = findings_of(report, "nccl_all_reduce_failed");
        REQUIRE(findings.size() == 1);
        CHECK(findings[0]["level"] == "failed");
        reliability::record("nccl", "--validate=full: NCCL's all-reduce across the workers fails",
                            "nccl_all_reduce_failed (failed); exit 5", "the run");
    }
    SECTION("quick mode does not all-reduce") {
        TempDir dir;
        const auto report = e2e::report(run(dir, torch_venv(dir, true), machine(dir, "")));
        CHECK_FALSE(report["nccl"].contains("all_reduce"));
    }
}

TEST_CASE("nccl: eight GPUs on the cuMem path: a worker process imports each other process's buffer once, whichever "
          "of its GPUs pull it, and its own GPUs' not at all",
          "[nccl][pod]") {
    if (skip_without_prerequisites()) return;
    for (const int processes : {1, 2, 8}) {
        INFO(processes << " worker processes");
        TempDir dir;
        const std::string machine_file = dir.file("pod.toml");
        e2e::write_file(machine_file, e2e::read_file(e2e::gpu_fixture("pod-8x-h100-nvswitch")) +
                                          "\n[faults]\nhandle_open_delay_ms = 20\n");
        const auto result = run(dir, torch_venv(dir, true), machine_file, {{"PROVISION_FAKE_CUDA_OPEN_LOG", dir.file("opens.log")}},
                                {"--worker-processes", std::to_string(processes)});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        REQUIRE(report["links"].size() == 28);
        for (const auto& link : report["links"]) {
            CHECK(link["check"]["status"] == "passed");
            CHECK(link["check"]["path"] == "cumem-fd");
        }
        // The fake libcuda logs "PID BEGIN END UUID" for each import.
        std::map<long, int> imports;
        std::ifstream log(dir.file("opens.log"));
        long pid = 0;
        for (std::string begin, end, uuid; log >> pid >> begin >> end >> uuid;) ++imports[pid];
        // A process imports each of the other processes' buffers once, and
        // maps its own GPUs' without importing them: one process, nothing;
        // two of four GPUs, the other's four; a process a GPU, its seven peers'.
        CHECK(imports.size() == static_cast<std::size_t>(processes == 1 ? 0 : processes));
        for (const auto& [process, count] : imports) CHECK(count == (processes == 8 ? 7 : 4));
    }
    reliability::record("nccl", "8 GPUs on the cuMem path in one, two and eight worker processes (fake libcuda)",
                        "every pair passed; each process imported each other process's buffer once and mapped its own "
                        "GPUs' (0, 8 and 56 imports, not 56 each time)",
                        "nothing");
}

namespace {

// GPU 0 has no room for another context: another process holds 79000 MiB of it.
const char* kGpu0Busy = "listed_processes = [{ pid = 4242, mib = 79000 }]\n"
                        "failing_calls = [{ function = \"cuDevicePrimaryCtxRetain\", gpu = 0, error = 2 }]";
const char* kGpu0Held = "memory_used_mib = 79000";

// What of GPU 0 the report says was not measured: its checks, its pair, its host memory.
void check_gpu0_not_measured(const nlohmann::json& report) {
    for (const auto& check : report["validation"]["checks"])
        if (check["gpu"] == 0) {
            CHECK(check["status"] == "not-measured");
            CHECK(has(check["detail"].get<std::string>(), "no room for another context"));
        }
    REQUIRE(report["validation"]["busy"].size() == 1);
    CHECK(report["validation"]["busy"][0]["gpu"] == 0);
    CHECK(has(report["validation"]["busy"][0]["reason"].get<std::string>(),
              "no room for a context: 1 other process holds 79000 MiB of its memory"));
    REQUIRE(report["links"].size() == 1);
    CHECK(report["links"][0]["state"] == "not-measured");
    CHECK(report["links"][0]["check"]["status"] == "not-measured");
    CHECK(has(report["links"][0]["check"]["detail"].get<std::string>(), "GPU 0 could not be opened"));
    CHECK_FALSE(report["links"][0]["check"].contains("failed_path"));  // not tried again on another path
    CHECK(report["gpus"][0]["nccl_host_memory"]["status"] == "not-measured");
    CHECK(report["gpus"][1]["nccl_host_memory"]["status"] == "passed");
    // Nothing that was not measured is called broken.
    for (const char* signal : {"p2p_broken", "cumem_host_failed", "cumem_p2p_failed", "nccl_all_reduce_failed"})
        CHECK(findings_of(report, signal).empty());
}

}  // namespace

TEST_CASE("nccl: a GPU other processes hold is not measured: no pair, no host memory, no NCCL setting from it",
          "[nccl][busy]") {
    if (skip_without_prerequisites()) return;
    SECTION("a single run stops (exit 7): a job should not start on a GPU that is taken") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, kGpu0Busy, kGpu0Held));
        INFO(result.err);
        CHECK(result.exit_code == 7);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "failed");
        check_gpu0_not_measured(report);
        CHECK(has(result.err, "GPU 0 is busy, its checks not measured"));
        reliability::record("validation",
                            "2 H100, another process holds GPU 0 (no room for a context), cuMem paths, --busy-gpu fail",
                            "exit 7, failed; GPU 0's checks, its pair and its host memory not-measured; no "
                            "p2p_broken, no cumem_host_failed, no NCCL setting",
                            "the run (by the policy)");
    }
    SECTION("--busy-gpu share: the job goes on, degraded, and nothing is written from what was not measured") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, kGpu0Busy, kGpu0Held), {}, {"--busy-gpu", "share"});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "degraded");
        check_gpu0_not_measured(report);
        CHECK(nccl_settings(dir).empty());  // no NCCL_P2P_DISABLE, no NCCL_CUMEM_HOST_ENABLE
        reliability::record("validation", "the same with --busy-gpu share (PROVISION_BUSY_GPU=share)",
                            "exit 0, degraded; the env file carries no NCCL setting", "nothing");
    }
    SECTION("--validate=full: the all-reduce leaves the GPU not opened out") {
        TempDir dir;
        const auto result =
            run(dir, torch_venv(dir, true), machine(dir, kGpu0Busy, kGpu0Held), {{"PROVISION_BUSY_GPU", "share"}}, {"--validate=full"});
        INFO(result.err);
        const auto report = e2e::report(result);
        CHECK_FALSE(report["nccl"].contains("all_reduce"));  // one rank left: nothing to all-reduce
        CHECK(findings_of(report, "nccl_all_reduce_failed").empty());
    }
}

TEST_CASE("dcgm: the driver's recovery action, read as DCGM reads it", "[nccl][dcgm]") {
    if (skip_without_prerequisites()) return;
    SECTION("drain-p2p: peer traffic stops (NCCL_P2P_DISABLE=1), the job goes on, degraded") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, "", "recovery_action = \"drain-p2p\""));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "degraded");
        CHECK(report["gpus"][0]["health"]["recovery_action"] == "drain-p2p");
        CHECK(findings_of(report, "gpu_recovery_drain_p2p").size() == 1);
        CHECK(nccl_settings(dir)["NCCL_P2P_DISABLE"] == "1");
        CHECK(has(result.err, "awaits recovery action drain-p2p"));
    }
    SECTION("gpu-reset: the run fails before the job starts") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, "", "recovery_action = \"gpu-reset\""));
        INFO(result.err);
        CHECK(result.exit_code != 0);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "failed");
        CHECK(findings_of(report, "gpu_recovery_reset").size() == 1);
        CHECK(has(result.err, "needs a reset"));
    }
    SECTION("none, on both GPUs: nothing to say") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, "", "recovery_action = \"none\""));
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "ok");
        CHECK(report["gpus"][0]["health"]["recovery_action"] == "none");
        CHECK_FALSE(report["gpus"][1]["health"].contains("recovery_action"));  // its driver does not say
    }
}

TEST_CASE("dcgm: link error counters read before the copies and after them", "[nccl][dcgm]") {
    if (skip_without_prerequisites()) return;
    const std::string counters = "link_errors = { nvlink_replay = 2, nvlink_crc = 40, pcie_replays = 3 }";
    SECTION("steady counters: read twice, nothing found") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true), machine(dir, "", counters));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        const auto& health = report["gpus"][0]["health"];
        CHECK(health["link_errors"]["nvlink_replay"] == 2);
        CHECK(health["link_errors_after_copies"]["nvlink_replay"] == 2);
        CHECK(findings_of(report, "nvlink_errors").empty());
        CHECK(report["verdict"] == "ok");
    }
    SECTION("replays that rise under the copies mark the GPU degraded, with the counts") {
        TempDir dir;
        const auto result = run(dir, torch_venv(dir, true),
                                machine(dir, "link_error_rise = { nvlink_replay = 4, pcie_replays = 1 }", counters));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["health"]["link_errors_after_copies"]["nvlink_replay"] == 6);
        REQUIRE(findings_of(report, "nvlink_errors").size() == 1);
        CHECK(report["verdict"] == "degraded");
        CHECK(findings_of(report, "pcie_replays").empty());  // 1 is within Gen5 x16's allowance
        CHECK(has(result.err, "4 replays during the copies"));
        reliability::record("health", "2 H100, GPU 0's NVLink replay counter rises by 4 during the copies",
                            "nvlink_errors, degraded, the counts before and after in the report", "nothing");
    }
}

TEST_CASE("dcgm: Xids in the kernel's log, by GPU", "[nccl][dcgm][xid]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    // GPU 0 sits at bus 0x18, GPU 1 at 0x20 (the fake NVML's layout).
    e2e::write_file(dir.file("kmsg"), "4,1,1,-;NVRM: Xid (PCI:0000:20:00): 31, pid=77, name=python, MMU Fault\n"
                                      "3,2,2,-;NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n");
    SECTION("a critical Xid on GPU 0 fails the run; GPU 1's application fault is listed, not judged") {
        const auto result =
            run(dir, torch_venv(dir, true), machine(dir, ""), {{"PROVISION_TEST_KMSG", dir.file("kmsg")}});
        INFO(result.err);
        const auto report = e2e::report(result);
        REQUIRE(report["gpus"][0]["health"]["xids"].size() == 1);
        CHECK(report["gpus"][0]["health"]["xids"][0]["xid"] == 79);
        CHECK(report["gpus"][1]["health"]["xids"][0]["xid"] == 31);
        const auto critical = findings_of(report, "xid_critical");
        REQUIRE(critical.size() == 1);
        CHECK(critical[0]["gpu"] == 0);
        CHECK(report["verdict"] == "failed");
        CHECK(has(result.err, "Xid 79 (GPU has fallen off the bus)"));
    }
    SECTION("a log that cannot be read says so; it is never \"no Xids\"") {
        const auto result = run(dir, torch_venv(dir, true), machine(dir, ""),
                                {{"PROVISION_TEST_KMSG", dir.file("no-such-log")}});
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["health"]["xids"] == "not-read");
        CHECK(has(report["driver"]["kernel_log_unread"].get<std::string>(), "no-such-log cannot be read"));
        CHECK(report["verdict"] == "ok");
    }
}

namespace {

// A port no one listens on now (the kernel's choice for a socket bound to
// port 0, let go at once).
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t size = sizeof address;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    ::close(fd);
    return ntohs(address.sin_port);
}

// Node `rank` of a torchrun job of `nodes` nodes whose MASTER_ADDR is this
// host, its network read from stand-ins (only loopback is real).
std::map<std::string, std::string> node_of_job(const TempDir& dir, int nodes, int rank, int port,
                                               const std::string& limit = "60") {
    fs::create_directories(dir.file("stand-in/sys"));
    fs::create_directories(dir.file("stand-in/dev"));
    fs::create_directories(dir.file("stand-in/proc"));
    e2e::write_file(dir.file("stand-in/interfaces"), "lo up,running,loopback 127.0.0.1/8\n");
    return {{"NNODES", std::to_string(nodes)},
            {"NODE_RANK", std::to_string(rank)},
            {"MASTER_ADDR", "127.0.0.1"},
            {"MASTER_PORT", "29500"},
            {"PROVISION_RENDEZVOUS_PORT", std::to_string(port)},
            {"PROVISION_RENDEZVOUS_TIMEOUT", limit},
            {"PROVISION_TEST_SYSFS", dir.file("stand-in/sys")},
            {"PROVISION_TEST_DEV", dir.file("stand-in/dev")},
            {"PROVISION_TEST_PROC", dir.file("stand-in/proc")},
            {"PROVISION_TEST_INTERFACES", dir.file("stand-in/interfaces")},
            {"PROVISION_TEST_ROUTE", "127.0.0.1"}};
}

}  // namespace

TEST_CASE("nccl: --validate=full on a job of two nodes meets at provision's rendezvous and all-reduces across them",
          "[nccl][full][network]") {
    if (skip_without_prerequisites()) return;
    const int port = free_port();
    TempDir first, second;
    // Node 1 first, in the background: it waits for node 0 at the port.
    const std::string python1 = torch_venv(second, true), machine1 = machine(second, "");
    std::map<std::string, std::string> env1 = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                               {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                               {"PROVISION_FAKE_GPU_FIXTURE", machine1},
                                               {"PROVISION_TEST_WORKER", "simulate"},
                                               {"PROVISION_DETECT_TIMEOUT", "10"},
                                               {"PATH", second.file("no-bin")},
                                               {"HOME", second.file("no-home")}};
    for (auto& [name, value] : node_of_job(second, 2, 1, port)) env1[name] = value;
    const int out1 = ::open(second.file("report.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(out1 >= 0);
    const pid_t node1 = e2e::start({PROVISION_BINARY, "--check", "--json", "--validate=full", "--python", python1,
                                    "--env-file", second.file("env")},
                                   env1, out1);
    ::close(out1);
    const auto result = run(first, torch_venv(first, true), machine(first, ""), node_of_job(first, 2, 0, port),
                            {"--validate=full", "--explain"});
    int status = 0;
    REQUIRE(::waitpid(node1, &status, 0) == node1);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const auto report0 = e2e::report(result);
    const auto report1 = nlohmann::json::parse(e2e::read_file(second.file("report.json")));
    for (const auto* report : {&report0, &report1}) {
        const auto& all_reduce = (*report)["nccl"]["all_reduce"];
        CHECK(all_reduce["status"] == "passed");
        CHECK(all_reduce["ranks"] == 4);  // two GPUs a node
        CHECK(all_reduce["nodes"] == 2);
        CHECK(all_reduce["transport"] == "simulated");
        CHECK((*report)["network"]["rendezvous"]["status"] == "joined");
        CHECK(findings_of(*report, "nodes_missing").empty());
    }
    CHECK(report0["network"]["rendezvous"]["first_rank"] == 0);
    CHECK(report1["network"]["rendezvous"]["first_rank"] == 2);
    CHECK(has(result.err, "all-reduce over 4 GPUs on 2 nodes: passed"));
}

TEST_CASE("nccl: a node that never comes ends the wait at the limit with nodes_missing, never a hang",
          "[nccl][full][network]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, torch_venv(dir, true), machine(dir, ""), node_of_job(dir, 3, 0, free_port(), "1"),
                            {"--validate=full"});
    INFO(result.err);
    CHECK(result.exit_code == 0);  // degraded: the nodes' own start decides
    const auto report = e2e::report(result);
    CHECK(report["nccl"]["all_reduce"]["status"] == "not-measured");
    CHECK(findings_of(report, "nccl_all_reduce_failed").empty());
    CHECK(report["network"]["rendezvous"]["status"] == "missing");
    CHECK(report["network"]["rendezvous"]["missing"] == nlohmann::json::array({1, 2}));
    const auto missing = findings_of(report, "nodes_missing");
    REQUIRE(missing.size() == 1);
    CHECK(has(missing[0]["message"], "node ranks 1, 2 of the job's 3 nodes"));
    reliability::record("network", "--validate=full on a job of 3 nodes; nodes 1 and 2 never start",
                        "nodes_missing names them after --rendezvous-timeout (1 s); the all-reduce is not measured, "
                        "never failed",
                        "nothing");
}

namespace {

// A node of the job started in the background: provision with its report
// on stdout into `report.json` of its folder.
struct BackgroundNode {
    pid_t pid = -1;
    std::string report_path;
};

std::map<std::string, std::string> simulated_node(const TempDir& dir, int nodes, int rank, int port,
                                                  std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", machine(dir, "")},
                                              {"PROVISION_TEST_WORKER", "simulate"},
                                              {"PROVISION_DETECT_TIMEOUT", "10"},
                                              {"PATH", dir.file("no-bin")},
                                              {"HOME", dir.file("no-home")}};
    for (auto& [name, value] : node_of_job(dir, nodes, rank, port)) env[name] = value;
    for (auto& [name, value] : extra) env[name] = value;
    return env;
}

BackgroundNode start_node(const TempDir& dir, const std::map<std::string, std::string>& env,
                          std::vector<std::string> extra_args = {}) {
    BackgroundNode node;
    node.report_path = dir.file("report.json");
    const int out = ::open(node.report_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(out >= 0);
    std::vector<std::string> args = {PROVISION_BINARY, "--check", "--json", "--validate=full", "--python",
                                     torch_venv(dir, true), "--env-file", dir.file("env")};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    node.pid = e2e::start(args, env, out);
    ::close(out);
    return node;
}

// Waits for a background node; its exit status and report.
std::pair<int, nlohmann::json> finish(const BackgroundNode& node) {
    int status = 0;
    REQUIRE(::waitpid(node.pid, &status, 0) == node.pid);
    REQUIRE(WIFEXITED(status));
    return {WEXITSTATUS(status), nlohmann::json::parse(e2e::read_file(node.report_path))};
}

e2e::Result run_node(const TempDir& dir, const std::map<std::string, std::string>& env,
                     std::vector<std::string> extra_args = {}) {
    std::vector<std::string> args = {"--check", "--json", "--validate=full", "--python", torch_venv(dir, true),
                                     "--env-file", dir.file("env")};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    return e2e::provision(args, env);
}

// A node that knows the job's variables, played in this process with
// provision's own rendezvous code: it comes, and then whatever `then` does.
provision::network::RendezvousConfig stranger(int nodes, int rank, int port) {
    provision::network::RendezvousConfig config;
    config.master_addr = "127.0.0.1";
    config.port = static_cast<std::uint16_t>(port);
    config.nodes = nodes;
    config.min_nodes = nodes;
    config.node_rank = rank;
    config.local_ranks = 1;
    config.job_key = provision::network::rendezvous_job_key("127.0.0.1", "29500", nodes, "");
    config.limit = std::chrono::milliseconds(60000);
    return config;
}

const provision::network::MakeId kNoId = [](std::string&) -> std::optional<std::string> { return std::nullopt; };

}  // namespace

TEST_CASE("nccl: a node that joins and vanishes never fails a healthy node, which names it and starts",
          "[nccl][full][network][proof]") {
    if (skip_without_prerequisites()) return;
    const int port = free_port();
    TempDir dir;
    // Node 1 comes, hears node 0's id, and goes away (killed, evicted, or a
    // process that knows the job's address, port and size).  Node 0's NCCL
    // would then wait for it: the simulated all-reduce hangs as NCCL's does.
    std::thread vanishing([&] {
        provision::network::Meeting one(stranger(2, 1, port));
        CHECK(one.meet(kNoId).status == provision::network::RendezvousStatus::joined);
    });
    const auto result = run_node(dir, simulated_node(dir, 2, 0, port, {{"PROVISION_TEST_FAULT", "nccl=hang"}}),
                                 {"--explain"});
    vanishing.join();
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    CHECK(report["nccl"]["all_reduce"]["status"] == "not-measured");
    CHECK(findings_of(report, "nccl_all_reduce_failed").empty());
    const auto lost = findings_of(report, "nodes_lost");
    REQUIRE(lost.size() == 1);
    CHECK(has(lost[0]["message"], "node 1 vanished"));
    CHECK(report["network"]["proof"]["blame"] == "nodes-lost");
    CHECK(report["network"]["proof"]["lost"][0]["node"] == 1);
    reliability::record("network", "--validate=full on 2 nodes; node 1 comes to the rendezvous, hears the NCCL id "
                                   "and vanishes",
                        "node 0 stops waiting at once, names node 1 in nodes_lost (degraded); its all-reduce is not "
                        "measured, never failed",
                        "nothing");
}

TEST_CASE("nccl: the node whose NCCL failed carries the failure; the other names it and is not failed",
          "[nccl][full][network][proof]") {
    if (skip_without_prerequisites()) return;
    const int port = free_port();
    TempDir first, second;
    const auto node1 = start_node(second, simulated_node(second, 2, 1, port, {{"PROVISION_TEST_FAULT", "nccl=error"}}));
    const auto result = run_node(first, simulated_node(first, 2, 0, port, {{"PROVISION_TEST_FAULT", "nccl=hang"}}));
    const auto [status1, report1] = finish(node1);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report0 = e2e::report(result);
    CHECK(findings_of(report0, "nccl_all_reduce_failed").empty());
    const auto lost = findings_of(report0, "nodes_lost");
    REQUIRE(lost.size() == 1);
    CHECK(has(lost[0]["message"], "node 1 failed"));
    CHECK(has(lost[0]["message"], "simulated: error"));
    CHECK(status1 == 5);
    const auto failed = findings_of(report1, "nccl_all_reduce_failed");
    REQUIRE(failed.size() == 1);
    CHECK(has(failed[0]["message"], "on 2 nodes"));
    CHECK(report1["network"]["proof"]["blame"] == "own-failure");
}

TEST_CASE("nccl: every node timed out together: the network between them, no node failed",
          "[nccl][full][network][proof]") {
    if (skip_without_prerequisites()) return;
    const int port = free_port();
    TempDir first, second;
    const std::map<std::string, std::string> hang = {{"PROVISION_TEST_FAULT", "nccl=hang"},
                                                      {"PROVISION_PROOF_TIMEOUT", "1"}};
    const auto node1 = start_node(second, simulated_node(second, 2, 1, port, hang));
    const auto result = run_node(first, simulated_node(first, 2, 0, port, hang));
    const auto [status1, report1] = finish(node1);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(status1 == 0);
    for (const auto& report : {e2e::report(result), report1}) {
        CHECK(findings_of(report, "nccl_all_reduce_failed").empty());
        const auto unreachable = findings_of(report, "nodes_unreachable");
        REQUIRE(unreachable.size() == 1);
        CHECK(has(unreachable[0]["message"], "not at any GPU"));
        CHECK(report["network"]["proof"]["limit_s"] == 1.0);
    }
}

TEST_CASE("nccl: with a token, strangers are refused and learn nothing; the job's nodes meet and pass",
          "[nccl][full][network][proof][token]") {
    if (skip_without_prerequisites()) return;
    const int port = free_port();
    TempDir first, second, secrets;
    const std::string secret = "7f3c-the-jobs-token-9a1e";
    e2e::write_file(secrets.file("token"), secret + "\n");
    const std::vector<std::string> token = {"--rendezvous-token-file", secrets.file("token")};
    const auto node0 = start_node(first, simulated_node(first, 2, 0, port), token);
    // A stranger without the token, and one with another.
    {
        provision::network::Meeting without(stranger(2, 1, port));
        const auto outcome = without.meet(kNoId);
        CHECK(outcome.status == provision::network::RendezvousStatus::refused);
        CHECK(outcome.id.empty());
        auto wrong = stranger(2, 1, port);
        wrong.token = provision::network::RendezvousToken::of("a guess");
        provision::network::Meeting guessing(wrong);
        const auto guessed = guessing.meet(kNoId);
        CHECK(guessed.status == provision::network::RendezvousStatus::refused);
        CHECK(guessed.id.empty());
    }
    const auto result = run_node(second, simulated_node(second, 2, 1, port), token);
    const auto [status0, report0] = finish(node0);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(status0 == 0);
    for (const auto& report : {report0, e2e::report(result)}) {
        CHECK(report["nccl"]["all_reduce"]["status"] == "passed");
        CHECK(report["network"]["rendezvous"]["status"] == "joined");
        CHECK(report.dump().find(secret) == std::string::npos);
    }
    CHECK(result.err.find(secret) == std::string::npos);
    CHECK(e2e::read_file(second.file("env")).find(secret) == std::string::npos);
}

TEST_CASE("nccl: 16 nodes as processes meet with consistent ranks and all pass", "[nccl][full][network][proof]") {
    if (skip_without_prerequisites()) return;
    const int nodes = 16;
    const int port = free_port();
    std::vector<std::unique_ptr<TempDir>> dirs;
    std::vector<BackgroundNode> started;
    for (int rank = 1; rank < nodes; ++rank) {
        dirs.push_back(std::make_unique<TempDir>());
        started.push_back(start_node(*dirs.back(), simulated_node(*dirs.back(), nodes, rank, port),
                                     {"--worker-processes", "1"}));
    }
    TempDir zero;
    const auto result = run_node(zero, simulated_node(zero, nodes, 0, port), {"--worker-processes", "1"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report0 = e2e::report(result);
    CHECK(report0["network"]["rendezvous"]["first_rank"] == 0);
    CHECK(report0["nccl"]["all_reduce"]["ranks"] == 2 * nodes);
    CHECK(report0["network"]["proof"]["passed"] == nodes);
    for (int rank = 1; rank < nodes; ++rank) {
        const auto [status, report] = finish(started[static_cast<std::size_t>(rank - 1)]);
        INFO(rank);
        CHECK(status == 0);
        CHECK(report["network"]["rendezvous"]["first_rank"] == 2 * rank);  // two GPUs a node
        CHECK(report["nccl"]["all_reduce"]["status"] == "passed");
        CHECK(report["nccl"]["all_reduce"]["ranks"] == 2 * nodes);
    }
}

TEST_CASE("nccl: a rendezvous port that is MASTER_PORT is refused before anything listens",
          "[nccl][full][network]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    auto env = simulated_node(dir, 2, 0, 29500);  // MASTER_PORT is 29500 too
    const auto result = run_node(dir, env);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    const auto failed = findings_of(report, "rendezvous_failed");
    REQUIRE(failed.size() == 1);
    CHECK(has(failed[0]["message"], "is the job's MASTER_PORT"));
    CHECK(report["nccl"]["all_reduce"]["status"] == "not-measured");
}

TEST_CASE("nccl: provision in torchrun's worker of LOCAL_RANK 1 leaves the meeting to local rank 0",
          "[nccl][full][network]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    // No node 0 anywhere: a worker that met would wait out the limit (60 s).
    auto env = simulated_node(dir, 2, 1, free_port(), {{"LOCAL_RANK", "1"}});
    const auto result = run_node(dir, env);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(findings_of(report, "nodes_missing").empty());
    CHECK_FALSE(report["network"].contains("rendezvous"));
    CHECK(has(report.dump(), "only local rank 0's meets the other nodes"));
}

TEST_CASE("nccl: a token file that cannot be read keeps the node out, saying why", "[nccl][full][network][token]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run_node(dir, simulated_node(dir, 2, 1, free_port()),
                                 {"--rendezvous-token-file", dir.file("no-such-token")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto failed = findings_of(e2e::report(result), "rendezvous_failed");
    REQUIRE(failed.size() == 1);
    CHECK(has(failed[0]["message"], "cannot be used"));
}

namespace {

// The processes whose parent is `pid`, as /proc lists them now.
std::vector<long> children_of(long pid) {
    std::vector<long> children;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string fields = proc::stat_fields(std::stol(name));
        long parent = 0;
        if (!fields.empty() && std::sscanf(fields.c_str(), "%*c %ld", &parent) == 1 && parent == pid)
            children.push_back(std::stol(name));
    }
    return children;
}

}  // namespace

TEST_CASE("nccl: a node's provision killed outright takes its GPU workers with it", "[nccl][full][network][proof]") {
    // SIGKILLed or OOM-killed while it waits for the other nodes: its workers
    // would otherwise hold their GPUs (and, in NCCL's communicator, wait for
    // peers without end).
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const int port = free_port();
    // Node 1 comes and stays; node 0's ranks then hang in the all-reduce, as
    // NCCL's do, reading nothing more from provision.
    const auto node0 = start_node(dir, simulated_node(dir, 2, 0, port, {{"PROVISION_TEST_FAULT", "nccl=hang"}}));
    provision::network::Meeting one(stranger(2, 1, port));
    REQUIRE(one.meet(kNoId).status == provision::network::RendezvousStatus::joined);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the all-reduce's commands reach the workers
    std::vector<long> workers;
    for (int i = 0; i < 4000 && workers.size() < 2; ++i) {
        workers = children_of(node0.pid);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE_FALSE(workers.empty());
    REQUIRE(::kill(node0.pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(node0.pid, &status, 0) == node0.pid);
    for (const long worker : workers) {
        bool gone = false;
        for (int i = 0; i < 4000 && !gone; ++i) {
            gone = !proc::running(worker);
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        INFO(worker);
        CHECK(gone);
    }
}
