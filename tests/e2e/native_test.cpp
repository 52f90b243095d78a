// Whether the workload's torch can use the GPU, judged from its files: fake
// torch trees whose libtorch_cuda.so is a small library built by nvcc with
// chosen targets (tests/native), on simulated machines of every kind.
#include <catch2/catch.hpp>

#include <filesystem>

#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

namespace {

namespace fs = std::filesystem;

// A venv for Python 3.12 whose torch is `version` built for `cuda` ("" for
// a CPU build) with `library` (a file of tests/native's) as libtorch_cuda.so.
std::string torch_venv(const e2e::TempDir& dir, const std::string& version, const std::string& cuda,
                       const std::string& library) {
    const std::string root = dir.file("venv");
    const std::string site = root + "/lib/python3.12/site-packages";
    fs::create_directories(site + "/torch/lib");
    fs::create_directories(site + "/torch-" + version + ".dist-info");
    e2e::write_file(site + "/torch-" + version + ".dist-info/METADATA",
                    fmt::format("Metadata-Version: 2.1\nName: torch\nVersion: {}\n", version));
    e2e::write_file(site + "/torch/version.py",
                    fmt::format("__version__ = '{}'\ncuda: Optional[str] = {}\nhip: Optional[str] = None\n", version,
                                cuda.empty() ? "None" : "'" + cuda + "'"));
    if (!library.empty())
        fs::copy_file(std::string(PROVISION_NATIVE_TEST_DATA) + "/" + library, site + "/torch/lib/libtorch_cuda.so");
    fs::create_directories(root + "/bin");
    e2e::write_file(root + "/pyvenv.cfg", "home = /nonexistent/bin\nversion = 3.12.3\n");
    e2e::write_file(root + "/bin/python3", "#!/bin/sh\n");
    return root + "/bin/python3";
}

e2e::Result check(const e2e::TempDir& dir, const std::string& python, const std::string& fixture) {
    return e2e::provision({"--json", "--gpu-fixture", fixture, "--no-validate", "--python", python, "--env-file",
                           dir.file("env")},
                          {{"PATH", dir.file("no-bin")}, {"HOME", dir.file("no-home")}});
}

std::string machine(const e2e::TempDir& dir, const std::string& name, const std::string& capability,
                    const std::string& driver_cuda) {
    const std::string path = dir.file("machine.toml");
    e2e::write_file(path, fmt::format("[driver]\nversion = \"570.124.06\"\ncuda = \"{}\"\n\n[[gpus]]\nname = \"{}\"\n"
                                      "compute_capability = \"{}\"\nmemory_mib = 32607\n",
                                      driver_cuda, name, capability));
    return path;
}

nlohmann::json finding(const nlohmann::json& report, const std::string& signal) {
    for (const auto& entry : report["findings"])
        if (entry["signal"] == signal) return entry;
    return nullptr;
}

}  // namespace

TEST_CASE("torch's device code runs by SASS on the GPU it was built for") {
    if (!PROVISION_NATIVE_HAVE_CUDA_DATA) {
        WARN("skipped: no nvcc to build the test libraries");
        return;
    }
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libtorch_cuda.so"),
                              e2e::gpu_fixture("h100"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    REQUIRE(report["native"].size() == 1);
    CHECK(report["native"][0]["package"] == "torch");
    CHECK(report["native"][0]["cuda"] == "13.0");
    CHECK(report["native"][0]["sass"] == nlohmann::json({"8.0", "8.6", "9.0"}));
    CHECK(report["native"][0]["gpus"][0]["runs"] == "sass");
    CHECK(report["verdict"] == "ok");
    CHECK(report["selected"]["mechanism"] == "sdpa");
}

TEST_CASE("an RTX 5090 with a torch built for sm_80 to sm_90 only is refused, naming sm_120") {
    if (!PROVISION_NATIVE_HAVE_CUDA_DATA) {
        WARN("skipped: no nvcc to build the test libraries");
        return;
    }
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.6.0+cu126", "12.6", "cuda/libtorch_cuda.so"),
                              e2e::gpu_fixture("rtx5090"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("sm_120") != std::string::npos);
    CHECK(result.err.find("no kernel image") != std::string::npos);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "failed");
    CHECK(finding(report, "no_kernel_image")["level"] == "failed");
    CHECK(report["native"][0]["gpus"][0]["runs"] == "no");
    CHECK_FALSE(fs::exists(dir.file("env")));
    reliability::record("native code", "torch built for sm_80..sm_90 on an RTX 5090 (sm_120)",
                        "exit 5 before the workload starts; the message names sm_120 and what torch carries",
                        "nothing");
}

TEST_CASE("a GPU that runs torch only through PTX proceeds, degraded") {
    if (!PROVISION_NATIVE_HAVE_CUDA_DATA) {
        WARN("skipped: no nvcc to build the test libraries");
        return;
    }
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.6.0+cu126", "12.6", "cuda/libptx.so"),
                              e2e::gpu_fixture("rtx5090"));
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    CHECK(finding(report, "ptx_jit_only")["level"] == "degraded");
    CHECK(report["native"][0]["gpus"][0]["runs"] == "ptx-jit");
}

TEST_CASE("a cu130 torch on a driver that runs CUDA 12.8 is refused, naming the driver it needs") {
    if (!PROVISION_NATIVE_HAVE_CUDA_DATA) {
        WARN("skipped: no nvcc to build the test libraries");
        return;
    }
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libtorch_cuda.so"),
                              machine(dir, "NVIDIA H100 80GB HBM3", "9.0", "12.8"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("CUDA 13.0") != std::string::npos);
    CHECK(result.err.find("580.65.06") != std::string::npos);
    CHECK(finding(e2e::report(result), "driver_too_old")["level"] == "failed");
    reliability::record("native code", "torch 2.11.0+cu130 on a driver that runs CUDA 12.8",
                        "exit 5; the message names CUDA 13.0 and driver 580.65.06 or newer", "nothing");
}

TEST_CASE("a CPU-only torch on a machine with an NVIDIA GPU is refused") {
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.11.0+cpu", "", ""), e2e::gpu_fixture("h100"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("cpu build") != std::string::npos);
    CHECK(finding(e2e::report(result), "torch_cpu_build")["level"] == "failed");
    reliability::record("native code", "a CPU-only torch (2.11.0+cpu) on an H100", "exit 5; says it is a CPU build",
                        "nothing");
}

TEST_CASE("a policy may let a CPU-only torch through, degraded") {
    e2e::TempDir dir;
    e2e::write_file(dir.file("policy.toml"), "[policy]\ntorch_cpu_build = \"degraded\"\n");
    const auto python = torch_venv(dir, "2.11.0+cpu", "", "");
    const auto result = e2e::provision({"--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate",
                                        "--python", python, "--recipe", dir.file("policy.toml"), "--env-file",
                                        dir.file("env")},
                                       {{"PATH", dir.file("no-bin")}, {"HOME", dir.file("no-home")}});
    CHECK(result.exit_code == 0);
    CHECK(e2e::report(result)["verdict"] == "degraded");
}
