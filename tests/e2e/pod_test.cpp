// The pod as a whole, end to end: every pod finding with its exit status and
// env file, on simulated pods of 2, 4 and 8 GPUs and a mixed one
// (tests/fixtures/gpus/pod-*.toml), on the fake NVML acting out the same
// machines, and the container's limits read from a real tmpfs /dev/shm of a
// chosen size and a real RLIMIT_MEMLOCK (prlimit) in a private mount
// namespace.
#include <unistd.h>

#include <regex>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::findings_of;
using e2e::has;

namespace {

// provision on a simulated pod: torch installed, no validation, the env file in `dir`.
e2e::Result on_fixture(const TempDir& dir, const std::string& fixture, std::vector<std::string> extra = {},
                       std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"--gpu-fixture", e2e::gpu_fixture(fixture), "--json", "--site-packages",
                                     e2e::site_packages("torch-only"), "--env-file", dir.file("env")};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::provision(args, env);
}

// The same machine acted out by the fake NVML and libcuda.
e2e::Result on_fake_drivers(const TempDir& dir, const std::string& fixture, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--no-validate", "--json", "--site-packages", e2e::site_packages("torch-only"),
                                     "--env-file", dir.file("env")};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::provision(args, {{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                                 {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                                 {"PROVISION_FAKE_GPU_FIXTURE", e2e::gpu_fixture(fixture)},
                                 {"PROVISION_DETECT_TIMEOUT", "5"}});
}

std::map<std::string, std::string> nccl_of(const std::string& env_file) {
    return e2e::source_env_file(env_file, {"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "PROVISION_ATTENTION"});
}

}  // namespace

TEST_CASE("pod of 2: RTX 4090s on an old driver are p2p_broken by the recipes' table; NCCL_P2P_DISABLE=1") {
    TempDir dir;
    const auto result = on_fixture(dir, "pod-2x-rtx4090");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(broken[0]["level"] == "degraded");
    const std::string words = broken[0]["message"];
    CHECK(has(words, "GPUs 0 and 1 (PHB) claim peer access, but NVIDIA GeForce RTX 4090 on driver 535.129.03 is known "
                     "to hang or corrupt peer copies"));
    CHECK(has(words, "huggingface/accelerate"));
    CHECK(has(words, "not measured (a simulated machine)"));
    REQUIRE(report["links"].size() == 1);
    const auto& link = report["links"][0];
    CHECK(link["gpus"] == nlohmann::json::array({0, 1}));
    CHECK(link["topology"] == "PHB");
    CHECK(link["p2p"] == "ok");
    CHECK(link["state"] == "known-broken");
    CHECK(link["check"] == nlohmann::json({{"status", "skipped"}, {"detail", "simulated"}}));
    CHECK(report["gpus"][0]["pcie"] ==
          nlohmann::json({{"generation", 4}, {"width", 16}, {"max_generation", 4}, {"max_width", 16}}));
    CHECK_FALSE(report["gpus"][0].contains("nvlinks"));
    const auto env = nccl_of(dir.file("env"));
    CHECK(env.at("NCCL_P2P_DISABLE") == "1");
    CHECK(env.at("NCCL_P2P_LEVEL").empty());
    CHECK(report["env"]["NCCL_P2P_DISABLE"] == "1");
    CHECK(has(result.err, "Peer access:"));
    CHECK(has(result.err, "written: NCCL_P2P_DISABLE=1"));
    reliability::record("pod", "2 RTX 4090 claiming peer access on driver 535 (accelerate's rule), no copy check",
                        "exit 0, degraded, p2p_broken (not measured); env file NCCL_P2P_DISABLE=1");
}

TEST_CASE("pod of 2: no peer access is p2p_unavailable, level ok, and NCCL is told nothing") {
    TempDir dir;
    const auto result = on_fixture(dir, "pod-2x-rtx4090-r550");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "ok");
    const auto unavailable = findings_of(report, "p2p_unavailable");
    REQUIRE(unavailable.size() == 1);
    CHECK(unavailable[0]["level"] == "ok");
    CHECK(has(unavailable[0]["message"], "0 and 1 (PHB): chipset-not-supported: NCCL moves their data through host "
                                         "memory"));
    CHECK(report["links"][0]["state"] == "unavailable");
    CHECK(findings_of(report, "p2p_broken").empty());
    const auto env = nccl_of(dir.file("env"));
    CHECK(env.at("NCCL_P2P_DISABLE").empty());
    CHECK(env.at("NCCL_P2P_LEVEL").empty());
}

TEST_CASE("pod of 4: L40S pairs broken by axolotl's rule and a GPU at x8 (pcie_degraded)") {
    TempDir dir;
    const auto result = on_fixture(dir, "pod-4x-l40s", {"--explain"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    REQUIRE(report["links"].size() == 6);
    for (const auto& link : report["links"]) CHECK(link["state"] == "known-broken");
    CHECK(report["links"][0]["topology"] == "PIX");
    CHECK(report["links"][1]["topology"] == "NODE");
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(has(broken[0]["message"], "axolotl"));
    const auto pcie = findings_of(report, "pcie_degraded");
    REQUIRE(pcie.size() == 1);
    CHECK(pcie[0]["gpu"] == 2);
    CHECK(pcie[0]["level"] == "degraded");
    CHECK(has(pcie[0]["message"], "GPU 2 (NVIDIA L40S): its PCIe link runs at x8 of x16"));
    CHECK(nccl_of(dir.file("env")).at("NCCL_P2P_DISABLE") == "1");
    // --explain: the matrix, paths above the diagonal and results below.
    CHECK(has(result.err, "Links between GPUs (path above the diagonal, peer copies below):"));
    CHECK(has(result.err, "GPU 2: PCIe Gen4 x8 (max Gen4 x16)"));
    CHECK(std::regex_search(result.err, std::regex(R"(GPU0 +X +PIX +NODE +NODE)")));
    CHECK(std::regex_search(result.err, std::regex(R"(GPU3 +broken\* +broken\* +broken\* +X)")));
    reliability::record("pod", "4 L40S claiming peer access (axolotl's rule), one trained at x8",
                        "exit 0, degraded, p2p_broken (not measured) and pcie_degraded naming GPU 2; "
                        "NCCL_P2P_DISABLE=1");
}

TEST_CASE("pod of 4: PCIe pairs broken while NVLink bridges pass keep NVLink (NCCL_P2P_LEVEL=NVL)") {
    TempDir dir;
    // The operator's own rule: these A100 PCIe racks hang on PCIe peer copies.
    e2e::write_file(dir.file("racks.toml"),
                    "[[pod.known_broken_p2p]]\ngpu_names = [\"A100-PCIE\"]\nsource = \"our racks' ACS setting\"\n");
    auto result = on_fixture(dir, "pod-4x-a100-nvlink-bridges", {"--recipe", dir.file("racks.toml")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    CHECK(report["links"][0]["topology"] == "NV12");
    CHECK(report["links"][0]["state"] == "ok");
    CHECK(report["links"][1]["state"] == "known-broken");
    CHECK(report["gpus"][0]["nvlinks"] == nlohmann::json({{"total", 12}, {"active", 12}}));
    auto env = nccl_of(dir.file("env"));
    CHECK(env.at("NCCL_P2P_LEVEL") == "NVL");
    CHECK(env.at("NCCL_P2P_DISABLE").empty());
    CHECK(has(result.err, "broken between GPUs joined by PCIe (0 and 2, 0 and 3, 1 and 2, 1 and 3) while NVLink "
                          "pairs pass; written: NCCL_P2P_LEVEL=NVL"));

    // A value the user set stays, and the summary says so.
    result = on_fixture(dir, "pod-4x-a100-nvlink-bridges", {"--recipe", dir.file("racks.toml")},
                        {{"NCCL_P2P_LEVEL", "PIX"}});
    CHECK(result.exit_code == 0);
    report = e2e::report(result);
    env = nccl_of(dir.file("env"));
    CHECK(env.at("NCCL_P2P_LEVEL") == "PIX");
    CHECK(has(result.err, "the environment's NCCL_P2P_LEVEL=PIX stays, so provision's NCCL_P2P_LEVEL=NVL is not "
                          "written"));
    CHECK(has(result.err, "NCCL_P2P_LEVEL=PIX kept from the environment (the recipe's value: NVL)"));
    reliability::record("pod", "4 A100 PCIe, NVLink bridges pass, PCIe pairs broken (a user's known-broken rule); "
                        "then NCCL_P2P_LEVEL=PIX set by the user",
                        "NCCL_P2P_LEVEL=NVL written; the user's value kept and said so");
}

TEST_CASE("pod of 8: an HGX H100 with 2 NVLinks down on one GPU is nvlink_inactive") {
    TempDir dir;
    const auto result = on_fixture(dir, "pod-8x-h100-nvswitch");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    CHECK(report["links"].size() == 28);
    for (const auto& link : report["links"]) {
        CHECK(link["state"] == "ok");
        const bool with_five = link["gpus"][0] == 5 || link["gpus"][1] == 5;
        CHECK(link["topology"] == (with_five ? "NV16" : "NV18"));
    }
    CHECK(report["gpus"][5]["nvlinks"] == nlohmann::json({{"total", 18}, {"active", 16}}));
    const auto inactive = findings_of(report, "nvlink_inactive");
    REQUIRE(inactive.size() == 1);
    CHECK(inactive[0]["gpu"] == 5);
    CHECK(has(inactive[0]["message"], "GPU 5 (NVIDIA H100 80GB HBM3) has 16 of its 18 NVLinks active"));
    CHECK(findings_of(report, "p2p_broken").empty());
    const auto env = nccl_of(dir.file("env"));
    CHECK(env.at("NCCL_P2P_DISABLE").empty());
    CHECK(env.at("NCCL_P2P_LEVEL").empty());
    CHECK(env.at("PROVISION_ATTENTION") == "sdpa");
    reliability::record("pod", "8 H100 on NVSwitch, 16 of 18 NVLinks active on one GPU",
                        "exit 0, degraded, nvlink_inactive naming GPU 5; NV16 for its pairs; NCCL told nothing");
}

TEST_CASE("a mixed pod says which GPU limits the selection (mixed_gpus, ok)") {
    TempDir dir;
    const auto result = on_fixture(dir, "pod-mixed-h100-a100");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "ok");
    const auto mixed = findings_of(report, "mixed_gpus");
    REQUIRE(mixed.size() == 1);
    CHECK(mixed[0]["level"] == "ok");
    CHECK(mixed[0]["gpu"] == 1);
    CHECK(has(mixed[0]["message"], "GPU 1 (NVIDIA A100 80GB PCIe, compute capability 8.0, ampere) is the least capable "
                                   "and limits the selection"));
    CHECK(report["selected"]["preference"] == "ampere");
    CHECK(findings_of(report, "p2p_unavailable").size() == 1);
    CHECK(nccl_of(dir.file("env")).at("PROVISION_ATTENTION") == "sdpa");
}

TEST_CASE("a pod of one GPU has no pairs and says nothing about links") {
    TempDir dir;
    const auto result = on_fixture(dir, "h100", {"--explain"});
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["links"] == nlohmann::json::array());
    for (const char* signal : {"p2p_unavailable", "p2p_broken", "p2p_slow", "mixed_gpus"})
        CHECK(findings_of(report, signal).empty());
    CHECK_FALSE(has(result.err, "Links between GPUs"));
    CHECK_FALSE(has(result.err, "Peer access"));
    CHECK(report["container"].contains("shm_bytes"));
    CHECK(report["container"]["rdma_devices"].is_array());
}

TEST_CASE("the fake NVML acts out the same pods: topology, nvlink_inactive, p2p_broken not measured") {
    TempDir dir;
    auto result = on_fake_drivers(dir, "pod-8x-h100-nvswitch");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    auto report = e2e::report(result);
    CHECK(report["simulated"] == false);
    CHECK(report["links"].size() == 28);
    CHECK(report["links"][4]["topology"] == "NV16");  // 0 and 5
    CHECK(report["links"][0]["topology"] == "NV18");
    CHECK_FALSE(report["links"][0].contains("check"));  // no copy check ran
    CHECK(report["gpus"][5]["nvlinks"] == nlohmann::json({{"total", 18}, {"active", 16}}));
    CHECK(report["gpus"][0]["pcie"]["max_generation"] == 5);
    REQUIRE(findings_of(report, "nvlink_inactive").size() == 1);
    CHECK(report["verdict"] == "degraded");

    result = on_fake_drivers(dir, "pod-2x-rtx4090");
    CHECK(result.exit_code == 0);
    report = e2e::report(result);
    const auto broken = findings_of(report, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(has(broken[0]["message"], "not measured (disabled (--no-validate))"));
    CHECK(nccl_of(dir.file("env")).at("NCCL_P2P_DISABLE") == "1");

    // A real GPU's idle PCIe generation is not judged; its width is.
    result = on_fake_drivers(dir, "pod-4x-l40s");
    report = e2e::report(result);
    const auto pcie = findings_of(report, "pcie_degraded");
    REQUIRE(pcie.size() == 1);
    CHECK(pcie[0]["gpu"] == 2);
    reliability::record("pod", "the fake NVML acting out 8 H100 (NVSwitch, links down), 2 RTX 4090, 4 L40S",
                        "the same topology, findings and NCCL settings as the simulated pods");
}

TEST_CASE("the container's /dev/shm, from a real tmpfs of a chosen size: shm_too_small under the floor") {
    if (::geteuid() != 0 || e2e::run("unshare", {"-m", "true"}).exit_code != 0) {
        WARN("skipped: a private mount namespace (unshare -m) with its own /dev/shm needs root");
        return;
    }
    TempDir dir;
    auto run_with_shm = [&](const std::string& size) {
        return e2e::run("unshare", {"-m", "sh", "-c",
                                    "mount -t tmpfs -o size=" + size + " provision-test /dev/shm && exec \"$@\"", "sh",
                                    PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("h100"), "--json",
                                    "--site-packages", e2e::site_packages("torch-only"), "--env-file", dir.file("env")});
    };
    auto result = run_with_shm("64m");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    auto report = e2e::report(result);
    CHECK(report["container"]["shm_bytes"] == 64 * 1024 * 1024);
    CHECK(report["verdict"] == "degraded");
    const auto small = findings_of(report, "shm_too_small");
    REQUIRE(small.size() == 1);
    CHECK(has(small[0]["message"], "/dev/shm holds 64 MiB, under the 1 GiB the recipes ask for"));
    CHECK(has(small[0]["message"], "--shm-size=1g or --ipc=host"));
    CHECK(has(small[0]["message"], "emptyDir with medium: Memory at /dev/shm"));
    CHECK(small[0]["action"]["actor"] == "container");
    CHECK(small[0]["action"]["docker"] == "--shm-size=1g (or --ipc=host, which shares the host's /dev/shm)");
    CHECK(has(small[0]["action"]["kubernetes"], "emptyDir: {medium: Memory, sizeLimit: 1Gi}"));
    CHECK(has(result.err, "  What to do, by who acts:\n    container: give /dev/shm 1 GiB or more; Docker: --shm-size=1g"));
    CHECK(e2e::source_env_file(dir.file("env"), {"PROVISION_ATTENTION"}).at("PROVISION_ATTENTION") == "sdpa");

    result = run_with_shm("1g");
    CHECK(result.exit_code == 0);
    report = e2e::report(result);
    CHECK(report["container"]["shm_bytes"] == 1024 * 1024 * 1024);
    CHECK(findings_of(report, "shm_too_small").empty());
    CHECK(report["verdict"] == "ok");
    reliability::record("container", "/dev/shm a 64 MiB tmpfs (Docker's default), then 1 GiB",
                        "exit 0, degraded, shm_too_small naming --shm-size=1g, --ipc=host and a Kubernetes "
                        "emptyDir; none at 1 GiB");
}

TEST_CASE("RLIMIT_MEMLOCK from a real prlimit: memlock_limited only with RDMA devices") {
    if (::geteuid() != 0 || e2e::run("unshare", {"-m", "true"}).exit_code != 0) {
        WARN("skipped: a private mount namespace (unshare -m) with its own /sys/class/infiniband needs root");
        return;
    }
    TempDir dir;
    // A private /sys/class holding one RDMA device, then provision under prlimit.
    auto run_with = [&](bool rdma, const std::string& memlock) {
        const std::string setup = rdma ? "mount -t tmpfs provision-test /sys/class && mkdir -p "
                                         "/sys/class/infiniband/mlx5_0 && "
                                       : "";
        return e2e::run("unshare", {"-m", "sh", "-c",
                                    setup + "mount -t tmpfs -o size=2g provision-test /dev/shm && exec prlimit "
                                            "--memlock=" + memlock + " \"$@\"",
                                    "sh", PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("h100"), "--json",
                                    "--site-packages", e2e::site_packages("torch-only"), "--env-file",
                                    dir.file("env")});
    };
    auto result = run_with(true, "8388608:8388608");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    auto report = e2e::report(result);
    CHECK(report["container"]["rdma_devices"] == nlohmann::json::array({"mlx5_0"}));
    CHECK(report["container"]["memlock_bytes"] == 8388608);
    CHECK(report["verdict"] == "degraded");
    const auto limited = findings_of(report, "memlock_limited");
    REQUIRE(limited.size() == 1);
    CHECK(has(limited[0]["message"], "RLIMIT_MEMLOCK is 8 MiB with RDMA devices present (mlx5_0)"));
    CHECK(has(limited[0]["message"], "--ulimit memlock=-1"));
    CHECK(limited[0]["action"]["docker"] == "--ulimit memlock=-1");
    CHECK(has(limited[0]["action"]["kubernetes"], "securityContext.capabilities.add: [IPC_LOCK]"));
    CHECK(e2e::read_file(dir.file("env")).find("PROVISION_ATTENTION") != std::string::npos);

    // Raising the hard limit needs CAP_SYS_RESOURCE, which a container may lack.
    if (e2e::run("prlimit", {"--memlock=unlimited:unlimited", "true"}).exit_code == 0) {
        result = run_with(true, "unlimited:unlimited");
        report = e2e::report(result);
        CHECK(report["container"]["memlock_bytes"].is_null());
        CHECK(findings_of(report, "memlock_limited").empty());
        CHECK(report["verdict"] == "ok");
    } else {
        WARN("not tried: an unlimited RLIMIT_MEMLOCK (prlimit cannot raise the hard limit here)");
    }

    // Without RDMA devices the limit is not even read.
    result = run_with(false, "65536:65536");
    report = e2e::report(result);
    CHECK_FALSE(report["container"].contains("memlock_bytes"));
    CHECK(findings_of(report, "memlock_limited").empty());
    reliability::record("container", "RLIMIT_MEMLOCK 8 MiB (prlimit) with an RDMA device, then unlimited, then 64 KiB "
                        "without RDMA devices",
                        "degraded with memlock_limited naming --ulimit memlock=-1; none when unlimited or without "
                        "RDMA devices");
}
