// Multi-node NVLink end to end on the fakes: a tray of four GPUs in one NVLink
// domain beyond the node (GH200 NVL32's Hopper, whose SASS the test venv's
// torch carries; NVML and CUDA answer for a GB200 NVL72 tray the same way)
// (NVML's fabric info with a cluster UUID and a clique, its health), IMEX
// channel stand-ins (/proc/devices and /dev/nvidia-caps-imex-channels), and
// the fake libcuda's fabric handles that export and import, or fail with
// 800 (no IMEX channel) or 400 (invalid resource handle).  One test a rule
// and a finding; an HGX machine (cluster UUID zero) runs none of it.
#include <filesystem>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "nccl_venv.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::skip_without_prerequisites;
using e2e::test_data;
using e2e::torch_venv;
using e2e::findings_of;
using e2e::has;

namespace {

namespace fs = std::filesystem;

constexpr const char* kCluster = "0123456789abcdef0123456789abcdef";

// A tray: four GPUs whose fabric is set up, in cluster kCluster and
// clique 7 (`cluster` false: zero, as on HGX), healthy; `faults` more.
std::string tray(const TempDir& dir, bool cluster, const std::string& faults = "") {
    std::string text = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";
    for (int gpu = 0; gpu < 4; ++gpu)
        text += fmt::format("\n[[gpus]]\nname = \"NVIDIA GH200 480GB\"\ncompute_capability = \"9.0\"\nmemory_mib = 97871\n"
                            "uuid = \"GPU-{}0000000-0000-4000-8000-000000000000\"\nnvlinks = 18\n",
                            gpu + 1);
    for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b)
            text += fmt::format("\n[[links]]\ngpus = [{}, {}]\ntopology = \"NV18\"\np2p = \"ok\"\n", a, b);
    text += "\n[faults]\nfabric_states = [\"completed\", \"completed\", \"completed\", \"completed\"]\n";
    if (cluster)
        text += fmt::format("fabric_cluster = \"{}\"\nfabric_cliques = [7, 7, 7, 7]\n"
                            "fabric_health_mask = [170, 170, 170, 170]\n"
                            "fabric_health = [\"healthy\", \"healthy\", \"healthy\", \"healthy\"]\n",
                            kCluster);
    text += faults + "\n";
    const std::string path = dir.file("machine.toml");
    e2e::write_file(path, text);
    return path;
}

// /proc/devices and /dev stand-ins: the IMEX channels' major listed as /dev/null's
// (1), and channel0 a link to /dev/null where `channel`.
std::map<std::string, std::string> imex(const TempDir& dir, bool channel) {
    fs::create_directories(dir.file("stand-in/proc"));
    fs::create_directories(dir.file("stand-in/dev/nvidia-caps-imex-channels"));
    e2e::write_file(dir.file("stand-in/proc/devices"),
                    "Character devices:\n  1 nvidia-caps-imex-channels\n195 nvidia\n\nBlock devices:\n  8 sd\n");
    const std::string channel0 = dir.file("stand-in/dev/nvidia-caps-imex-channels/channel0");
    if (channel && !fs::is_symlink(channel0)) fs::create_symlink("/dev/null", channel0);
    return {{"PROVISION_TEST_PROC", dir.file("stand-in/proc")}, {"PROVISION_TEST_DEV", dir.file("stand-in/dev")}};
}

e2e::Result run(const TempDir& dir, const std::string& machine_file, std::map<std::string, std::string> extra = {},
                std::vector<std::string> args = {}) {
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", machine_file},
                                              {"PROVISION_TEST_WORKER", "simulate"},
                                              {"PROVISION_DETECT_TIMEOUT", "10"},
                                              {"PATH", dir.file("no-bin")},
                                              {"HOME", dir.file("no-home")}};
    for (auto& [name, value] : extra) env[name] = value;
    std::vector<std::string> all = {"--check", "--json", "--python", torch_venv(dir, true),
                                    "--env-file", dir.file("env")};
    all.insert(all.end(), args.begin(), args.end());
    return e2e::provision(all, env);
}

std::string mnnvl_setting(const TempDir& dir) {
    return e2e::source_env_file(dir.file("env"), {"NCCL_MNNVL_ENABLE"})["NCCL_MNNVL_ENABLE"];
}

std::map<std::string, std::string> with(std::map<std::string, std::string> a, const std::map<std::string, std::string>& b) {
    a.insert(b.begin(), b.end());
    return a;
}

}  // namespace

TEST_CASE("fabric: an HGX machine (cluster UUID zero) runs nothing of multi-node NVLink", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, tray(dir, false), imex(dir, false));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK_FALSE(report.contains("fabric"));
    CHECK_FALSE(report["timings"].contains("fabric"));
    CHECK(report["gpus"][0]["fabric"]["state"] == "completed");
    CHECK(report["gpus"][0]["fabric"]["cluster_uuid"] == "");
    CHECK(findings_of(report, "imex_channel_missing").empty());
    CHECK(mnnvl_setting(dir).empty());
    reliability::record("fabric", "NVSwitch fabric set up, cluster UUID zero (HGX H100/H200)",
                        "no fabric stage, no handle check in the workers, nothing written", "the start");
}

TEST_CASE("fabric: a tray with an IMEX channel proves its fabric handles", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, tray(dir, true), imex(dir, true), {"--node-labels", dir.file("labels"),
                                                                    "--metrics", dir.file("metrics.prom")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    REQUIRE(report.contains("fabric"));
    const auto& fabric = report["fabric"];
    REQUIRE(fabric["cliques"].size() == 1);
    CHECK(fabric["cliques"][0]["cluster_uuid"] == kCluster);
    CHECK(fabric["cliques"][0]["clique_id"] == 7);
    CHECK(fabric["cliques"][0]["gpus"].size() == 4);
    CHECK(fabric["nccl_checks"] == true);
    CHECK(fabric["imex"]["listed"] == true);
    CHECK(fabric["imex"]["channels"][0]["usable"] == true);
    REQUIRE(fabric["handles"].size() == 4);
    for (const auto& handle : fabric["handles"]) CHECK(handle["status"] == "passed");
    CHECK(fabric["proven"] == true);
    CHECK(report["timings"].contains("fabric"));
    CHECK(report["gpus"][0]["fabric"]["version"] == 4);
    CHECK(report["gpus"][0]["fabric"]["health"] == "healthy");
    CHECK(report["gpus"][0]["fabric"]["cliques"].size() == 2);
    for (const char* signal : {"imex_channel_missing", "mnnvl_handle_failed", "fabric_unhealthy"})
        CHECK(findings_of(report, signal).empty());
    CHECK(mnnvl_setting(dir).empty());
    const std::string labels = e2e::read_file(dir.file("labels"));
    CHECK(has(labels, fmt::format("provision/gpu.clique={}.7\n", kCluster)));
    CHECK(has(labels, "provision/mnnvl=true\n"));
    const std::string metrics = e2e::read_file(dir.file("metrics.prom"));
    CHECK(has(metrics, fmt::format("provision_fabric_clique{{cluster_uuid=\"{}\",clique_id=\"7\"}} 4", kCluster)));
    CHECK(has(metrics, "provision_mnnvl_proven 1"));
    reliability::record("fabric", "a multi-node NVLink tray whose container has an IMEX channel",
                        "fabric handles exported, imported and mapped on every GPU; gpu.clique and mnnvl=true published",
                        "the multi-node NVLink path");
}

TEST_CASE("fabric: no IMEX channel and fabric memory refused with 800: NCCL_MNNVL_ENABLE=0", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    std::string calls = "failing_calls = [";
    for (int gpu = 0; gpu < 4; ++gpu)
        calls += fmt::format("{}{{ function = \"cuMemCreate.fabric\", gpu = {}, error = 800 }}", gpu ? ", " : "", gpu);
    const auto result = run(dir, tray(dir, true, calls + "]"), imex(dir, false));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto missing = findings_of(report, "imex_channel_missing");
    REQUIRE(missing.size() == 1);
    CHECK(has(missing[0]["message"].get<std::string>(), "holds no channel"));
    CHECK(has(missing[0]["action"]["kubernetes"].get<std::string>(), "ComputeDomain"));
    const auto failed = findings_of(report, "mnnvl_handle_failed");
    REQUIRE(failed.size() == 1);
    const std::string words = failed[0]["message"];
    CHECK(has(words, "CUDA error 800"));
    CHECK(has(words, "would stop the job at init"));
    CHECK(has(words, "NCCL_MNNVL_ENABLE=0 is written"));
    CHECK(report["fabric"]["proven"] == false);
    CHECK(report["fabric"]["handles"][0]["cuda_error"] == 800);
    CHECK(mnnvl_setting(dir) == "0");
    reliability::record("fabric", "multi-node NVLink without an IMEX channel in the container (CUDA error 800)",
                        "imex_channel_missing and mnnvl_handle_failed; NCCL_MNNVL_ENABLE=0 written", "the job's start");
}

TEST_CASE("fabric: an import refused as an invalid resource handle; the user's NCCL_MNNVL_ENABLE stays", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result =
        run(dir, tray(dir, true, "failing_calls = [{ function = \"cuMemImportFromShareableHandle.fabric\", gpu = 0, error = 400 }]"),
            with(imex(dir, true), {{"NCCL_MNNVL_ENABLE", "1"}}));
    INFO(result.err);
    const auto report = e2e::report(result);
    const auto failed = findings_of(report, "mnnvl_handle_failed");
    REQUIRE(failed.size() == 1);
    const std::string words = failed[0]["message"];
    CHECK(has(words, "CUDA error 400"));
    CHECK(has(words, "k8s-dra-driver-gpu#1417"));
    CHECK(has(words, "the environment's NCCL_MNNVL_ENABLE=1 stays"));
    CHECK(report["fabric"]["nccl_mnnvl"]["enable"] == 1);
    CHECK(findings_of(report, "imex_channel_missing").empty());
    CHECK(mnnvl_setting(dir) == "1");
}

TEST_CASE("fabric: NCCL_MNNVL_ENABLE=0 from the user: NCCL checks nothing, nor do the workers", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, tray(dir, true), with(imex(dir, true), {{"NCCL_MNNVL_ENABLE", "0"}}));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["fabric"]["nccl_checks"] == false);
    CHECK(has(report["fabric"]["nccl_checks_reason"].get<std::string>(), "NCCL_MNNVL_ENABLE=0"));
    CHECK(report["fabric"]["handles"].empty());
    CHECK_FALSE(report["fabric"].contains("proven"));
}

TEST_CASE("fabric: an unhealthy fabric (healthSummary, healthMask's 2-bit fields) is a finding", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const std::string machine = tray(dir, true);
    std::string text = e2e::read_file(machine);
    const auto replace = [&](const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
    };
    replace("fabric_health_mask = [170, 170, 170, 170]", "fabric_health_mask = [170, 154, 170, 170]");  // 0x9a
    replace("fabric_health = [\"healthy\", \"healthy\"", "fabric_health = [\"healthy\", \"unhealthy\"");
    e2e::write_file(machine, text);
    const auto result = run(dir, machine, imex(dir, true));
    INFO(result.err);
    const auto report = e2e::report(result);
    const auto findings = findings_of(report, "fabric_unhealthy");
    REQUIRE(findings.size() == 1);
    CHECK(findings[0]["gpu"] == 1);
    CHECK(has(findings[0]["message"].get<std::string>(), "route unhealthy"));
    CHECK(report["gpus"][1]["fabric"]["health"] == "unhealthy");
}

TEST_CASE("fabric: an old driver's v1 struct still gives the cluster and the clique", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    const auto result = run(dir, tray(dir, true, "fabric_version = 1"), imex(dir, true));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["gpus"][0]["fabric"]["version"] == 1);
    CHECK(report["gpus"][0]["fabric"]["health"] == "unknown");
    CHECK(report["fabric"]["cliques"][0]["clique_id"] == 7);
}

TEST_CASE("fabric: a known NCCL defect on this clique is named; its workaround written only when asked", "[fabric]") {
    if (skip_without_prerequisites()) return;
    TempDir dir;
    e2e::write_file(dir.file("defects.toml"),
                    "[[pod.nccl_defects]]\nname = \"test_defect\"\nnccl_versions = [\"2.28.9\"]\nmin_clique_gpus = 4\n"
                    "workaround = { NCCL_MNNVL_ENABLE = \"0\" }\nsource = \"a test\"\n");
    auto result = run(dir, tray(dir, true), imex(dir, true), {"--recipe", dir.file("defects.toml")});
    INFO(result.err);
    auto report = e2e::report(result);
    auto findings = findings_of(report, "nccl_known_defect");
    REQUIRE(findings.size() == 1);
    CHECK(has(findings[0]["message"].get<std::string>(), "written with --apply-workarounds"));
    CHECK(mnnvl_setting(dir).empty());

    result = run(dir, tray(dir, true), imex(dir, true), {"--recipe", dir.file("defects.toml"), "--apply-workarounds"});
    report = e2e::report(result);
    findings = findings_of(report, "nccl_known_defect");
    REQUIRE(findings.size() == 1);
    CHECK(has(findings[0]["message"].get<std::string>(), "NCCL_MNNVL_ENABLE=0 is written"));
    CHECK(mnnvl_setting(dir) == "0");
}
