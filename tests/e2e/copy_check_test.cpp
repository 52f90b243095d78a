// The copy check between GPUs and to the host, end to end: the fake NVML
// and libcuda act out the pods of tests/fixtures/gpus/pod-*.toml and the
// test-only simulated worker acts the copies out, a planted fault
// (PROVISION_TEST_FAULT) making one hang, deliver wrong bytes or crawl, so
// that every measured link finding is produced by the real pipeline.
#include <map>

#include <catch2/catch.hpp>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::findings_of;
using e2e::has;

namespace {

// provision --check on the fakes acting out `fixture`, the worker simulated,
// `fault` planted (empty: none).
e2e::Result copy_checked(const TempDir& dir, const std::string& fixture, const std::string& fault,
                         std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--check", "--json", "--site-packages", e2e::site_packages("torch-only"),
                                     "--env-file", dir.file("env")};
    args.insert(args.end(), extra.begin(), extra.end());
    std::map<std::string, std::string> env = {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                              {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                              {"PROVISION_FAKE_GPU_FIXTURE", e2e::gpu_fixture(fixture)},
                                              {"PROVISION_DETECT_TIMEOUT", "10"},
                                              {"PROVISION_TEST_WORKER", "simulate"}};
    if (!fault.empty()) env["PROVISION_TEST_FAULT"] = fault;
    return e2e::provision(args, env);
}

std::map<std::string, std::string> nccl_of(const std::string& env_file) {
    return e2e::source_env_file(env_file, {"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"});
}

bool skip_without_fault_injection() {
    if (PROVISION_FAULT_INJECTION) return false;
    WARN("skipped: built without fault injection (PROVISION_FAULT_INJECTION=OFF), so no simulated worker");
    return true;
}

}  // namespace

TEST_CASE("copy check: every pair of 2, 4 and 8 GPUs copied both ways and passed; NCCL told nothing",
          "[copy-check]") {
    if (skip_without_fault_injection()) return;
    for (const auto& [fixture, pairs] : {std::pair{"pod-2x-rtx4090", 1}, std::pair{"pod-4x-a100-nvlink-bridges", 6},
                                        std::pair{"pod-8x-h100-nvswitch", 28}}) {
        INFO(fixture);
        TempDir dir;
        const auto result = copy_checked(dir, fixture, "");
        INFO(result.err);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "passed");
        REQUIRE(report["links"].size() == static_cast<std::size_t>(pairs));
        std::size_t checked = 0;
        for (const auto& link : report["links"]) {
            if (link["p2p"] != "ok") continue;
            ++checked;
            REQUIRE(link.contains("check"));
            CHECK(link["check"]["status"] == "passed");
            CHECK(link["check"]["gb_per_s"].size() == 2);
        }
        CHECK(checked > 0);
        // Measured, the pair of RTX 4090s on driver 535 works: the recipes'
        // known-broken rule, which stands in only where nothing was measured,
        // does not apply.
        CHECK(findings_of(report, "p2p_broken").empty());
        CHECK(findings_of(report, "p2p_slow").empty());
        for (const auto& gpu : report["gpus"]) CHECK(gpu["pcie"].contains("h2d_gb_per_s"));
        const auto nccl = nccl_of(dir.file("env"));
        CHECK(nccl.at("NCCL_P2P_DISABLE").empty());
        CHECK(nccl.at("NCCL_P2P_LEVEL").empty());
    }
}

TEST_CASE("copy check: a copy that delivers wrong bytes is p2p_broken, measured; NCCL_P2P_DISABLE=1",
          "[copy-check]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto result = copy_checked(dir, "pod-8x-h100-nvswitch", "link.2-5=wrong-bytes");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(has(broken[0]["message"], "2"));
    CHECK(has(broken[0]["message"], "5"));
    for (const auto& link : report["links"]) {
        const bool planted = link["gpus"] == nlohmann::json({2, 5});
        CHECK(link["check"]["status"] == (planted ? "wrong-bytes" : "passed"));
    }
    CHECK(nccl_of(dir.file("env")).at("NCCL_P2P_DISABLE") == "1");  // an NVLink pair broke
    reliability::record("pod", "8 H100 (NVSwitch): the copy between GPUs 2 and 5 delivers wrong bytes (planted)",
                        "that pair p2p_broken, measured; the other 27 pass; degraded; NCCL_P2P_DISABLE=1");
}

TEST_CASE("copy check: a copy that hangs is stopped at the limit and the pair is p2p_broken", "[copy-check]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    // The limit counts from when the copies are sent, not from the GPUs'
    // opening; 3 s is far more than the simulated work takes on any machine.
    const auto result = copy_checked(dir, "pod-2x-rtx4090", "link=hang", {"--validate-timeout", "3"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    REQUIRE(report["links"].size() == 1);
    CHECK(report["links"][0]["check"]["status"] == "timeout");
    CHECK(findings_of(report, "p2p_broken").size() == 1);
    CHECK(report["validation"]["status"] == "passed");  // the checks themselves were done
    CHECK(nccl_of(dir.file("env")).at("NCCL_P2P_DISABLE") == "1");
    reliability::record("pod", "2 RTX 4090: a peer copy hangs (planted), --validate-timeout 3",
                        "the worker is killed at the limit; the pair p2p_broken (timeout); NCCL_P2P_DISABLE=1; "
                        "exit 0, degraded",
                        "nothing");
}

TEST_CASE("copy check: a copy that hangs between two worker processes kills both; the pairs come out as with a "
          "process per GPU", "[copy-check]") {
    if (skip_without_fault_injection()) return;
    // Four GPUs in two worker processes (0 and 1, 2 and 3); the rounds are
    // 0-3 1-2, then 0-2 1-3, then 0-1 2-3.  The copy between 0 and 2 hangs on
    // both sides, so both processes are killed at the limit, with GPUs 1 and
    // 3 in them, as their own round ends.
    std::map<std::string, std::string> statuses[2];
    for (const int processes : {2, 4}) {
        INFO(processes << " worker processes");
        TempDir dir;
        const auto result = copy_checked(dir, "pod-4x-a100-nvlink-bridges", "link.0-2=hang",
                                         {"--validate-timeout", "3", "--worker-processes", std::to_string(processes)});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["validation"]["status"] == "passed");  // every GPU's checks were done before the copies
        REQUIRE(report["links"].size() == 6);
        for (const auto& link : report["links"])
            statuses[processes == 2 ? 0 : 1][link["gpus"].dump()] = link["check"]["status"].get<std::string>();
    }
    CHECK(statuses[0].at("[0,2]") == "timeout");
    for (const char* passed : {"[1,3]", "[0,3]", "[1,2]"}) CHECK(statuses[0].at(passed) == "passed");
    // Their workers had stopped: those pairs were not measured, and are not called broken.
    for (const char* stopped : {"[0,1]", "[2,3]"}) CHECK(statuses[0].at(stopped) == "not-measured");
    CHECK(statuses[0] == statuses[1]);
    reliability::record("pod", "4 A100, two worker processes: the copy between GPUs 0 and 2 hangs (planted), "
                        "--validate-timeout 3",
                        "both processes killed at the limit; pair 0-2 timeout, the later pairs of GPUs 0 and 2 with "
                        "each other's mates not measured; the same statuses as a process per GPU; every check kept",
                        "nothing");
}

TEST_CASE("copy check: a copy that crawls is p2p_slow; a host link that crawls is pcie_degraded", "[copy-check]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    auto result = copy_checked(dir, "pod-4x-a100-nvlink-bridges", "link.0-1=slow");
    INFO(result.err);
    auto report = e2e::report(result);
    const auto slow = findings_of(report, "p2p_slow");
    REQUIRE(slow.size() == 1);
    CHECK(report["links"][0]["check"]["status"] == "passed");
    CHECK(report["verdict"] == "degraded");

    result = copy_checked(dir, "pod-2x-rtx4090", "host-link=slow");
    report = e2e::report(result);
    const auto pcie = findings_of(report, "pcie_degraded");
    CHECK(pcie.size() == 2);
    CHECK(report["gpus"][0]["pcie"]["h2d_gb_per_s"] == 0.5);
    reliability::record("pod", "a peer copy at 0.5 GB/s over 12 NVLink 3 links; host copies at 0.5 GB/s on PCIe Gen4 x16",
                        "p2p_slow for the pair; pcie_degraded for each GPU; degraded");
}

TEST_CASE("copy check: CUDA refusing peer access makes the pair p2p_unavailable", "[copy-check]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto result = copy_checked(dir, "pod-2x-rtx4090", "link=no-peer-access");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(findings_of(report, "p2p_unavailable").size() == 1);
    CHECK(findings_of(report, "p2p_broken").empty());
    CHECK(report["verdict"] == "ok");
    CHECK(report["links"][0]["check"]["status"] == "skipped");
}

TEST_CASE("copy check: PCIe pairs broken while NVLink pairs pass keep NVLink (NCCL_P2P_LEVEL=NVL), measured",
          "[copy-check]") {
    if (skip_without_fault_injection()) return;
    TempDir dir;
    const auto result =
        copy_checked(dir, "pod-4x-a100-nvlink-bridges",
                     "link.0-2=wrong-bytes,link.0-3=wrong-bytes,link.1-2=wrong-bytes,link.1-3=wrong-bytes");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(findings_of(report, "p2p_broken").size() == 1);  // one finding names every broken pair
    std::size_t broken = 0;
    for (const auto& link : report["links"]) {
        const bool nvlink = link["topology"] == "NV12";
        CHECK(link["check"]["status"] == (nvlink ? "passed" : "wrong-bytes"));
        if (link["state"] == "broken") ++broken;
    }
    CHECK(broken == 4);
    const auto nccl = nccl_of(dir.file("env"));
    CHECK(nccl.at("NCCL_P2P_LEVEL") == "NVL");
    CHECK(nccl.at("NCCL_P2P_DISABLE").empty());
}
