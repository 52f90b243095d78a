// Whether the workload's torch can use the GPU, judged from its files: fake
// torch trees whose libtorch_cuda.so is a small library built by nvcc with
// chosen targets (tests/native), on simulated machines of every kind.
#include <catch2/catch.hpp>

#include <filesystem>

#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::candidate;
using e2e::reasons_of;

namespace {

namespace fs = std::filesystem;

std::string test_data(const std::string& file) { return std::string(PROVISION_NATIVE_TEST_DATA) + "/" + file; }

std::string site_packages_of(const std::string& python) {
    return fs::path(python).parent_path().parent_path().string() + "/lib/python3.12/site-packages";
}

// A NAME-VERSION.dist-info folder with its METADATA in `site`; returns the folder.
std::string write_dist_info(const std::string& site, const std::string& name, const std::string& version) {
    const std::string dist_info = fmt::format("{}/{}-{}.dist-info", site, name, version);
    fs::create_directories(dist_info);
    e2e::write_file(dist_info + "/METADATA",
                    fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    return dist_info;
}

// A venv for Python 3.12 whose torch is `version` built for `cuda` ("" for
// a CPU build) with `library` (a file of tests/native's) as libtorch_cuda.so.
std::string torch_venv(const e2e::TempDir& dir, const std::string& version, const std::string& cuda,
                       const std::string& library) {
    const std::string root = dir.file("venv");
    const std::string site = root + "/lib/python3.12/site-packages";
    fs::create_directories(site + "/torch/lib");
    write_dist_info(site, "torch", version);
    e2e::write_file(site + "/torch/version.py",
                    fmt::format("__version__ = '{}'\ncuda: Optional[str] = {}\nhip: Optional[str] = None\n", version,
                                cuda.empty() ? "None" : "'" + cuda + "'"));
    if (!library.empty()) fs::copy_file(test_data(library), site + "/torch/lib/libtorch_cuda.so");
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

// The libraries with device code are built by nvcc; without it the tests
// that need them say so and pass nothing.
bool have_cuda_test_data() {
    if (PROVISION_NATIVE_HAVE_CUDA_DATA) return true;
    WARN("skipped: no nvcc to build the test libraries");
    return false;
}

// Installs distribution `name` `version` into the venv's site-packages:
// dist-info with METADATA and a RECORD naming `module` (a path relative to
// site-packages), which is a copy of the test library `library`.
void install_extension(const std::string& python, const std::string& name, const std::string& version,
                       const std::string& module, const std::string& library) {
    const std::string site = site_packages_of(python);
    const std::string dist_info = write_dist_info(site, name, version);
    e2e::write_file(dist_info + "/RECORD", fmt::format("{}/__init__.py,,\n{},sha256=x,1\n{}-{}.dist-info/RECORD,,\n",
                                                       name, module, name, version));
    fs::create_directories(fs::path(site + "/" + module).parent_path());
    fs::copy_file(test_data(library), site + "/" + module);
}

}  // namespace

TEST_CASE("torch's device code runs by SASS on the GPU it was built for") {
    if (!have_cuda_test_data()) return;
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
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.6.0+cu126", "12.6", "cuda/libtorch_cuda.so"),
                              e2e::gpu_fixture("rtx5090"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("sm_120") != std::string::npos);
    CHECK(result.err.find("no kernel image") != std::string::npos);
    // The fix from the recipes' [torch_builds]: the newest CUDA that serves an sm_120 on this driver.
    CHECK(result.err.find("torch>=2.9 from https://download.pytorch.org/whl/cu130") != std::string::npos);
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
    if (!have_cuda_test_data()) return;
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
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libtorch_cuda.so"),
                              machine(dir, "NVIDIA H100 80GB HBM3", "9.0", "12.8"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("CUDA 13.0") != std::string::npos);
    CHECK(result.err.find("580.65.06") != std::string::npos);
    CHECK(result.err.find("torch>=2.10 from https://download.pytorch.org/whl/cu128") != std::string::npos);
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

TEST_CASE("flash-attn without sm_120 code on an RTX 5090 falls back and says why") {
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    // torch carries sm_120a code (runs on the 5090); flash-attn sm_80 to sm_90 only.
    const auto python = torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libvariants.so");
    install_extension(python, "flash_attn", "2.8.3", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                      "cuda/libtorch_cuda.so");
    const auto result = check(dir, python, machine(dir, "NVIDIA GeForce RTX 5090", "12.0", "13.0"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "sdpa");
    CHECK(report["verdict"] == "degraded");
    const std::string why = reasons_of(report, "flash2");
    CHECK(why.find("compute capability 12.0") != std::string::npos);
    CHECK(why.find("SASS for 8.0 8.6 9.0") != std::string::npos);
    const auto found = finding(report, "no_kernel_image");
    CHECK(found["level"] == "degraded");
    CHECK(found["message"].get<std::string>().find("sm_120") != std::string::npos);
    REQUIRE(report["native"].size() == 2);
    CHECK(report["native"][1]["package"] == "flash_attn");
    CHECK(report["native"][1]["gpus"][0]["runs"] == "no");
    CHECK(fs::exists(dir.file("env")));
    reliability::record("native code", "flash-attn built for sm_80..sm_90 on an RTX 5090 (sm_120)",
                        "flash2 is rejected naming compute capability 12.0 and what the build carries; sdpa is "
                        "selected, degraded",
                        "nothing");
}

TEST_CASE("flash-attn with code for the GPU is selected") {
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "cuda/libtorch_cuda.so");
    install_extension(python, "flash_attn", "2.8.3", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                      "cuda/libtorch_cuda.so");
    const auto result = check(dir, python, e2e::gpu_fixture("a100"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK(report["verdict"] == "ok");
    CHECK(report["native"][1]["gpus"][0]["runs"] == "sass");
    CHECK(report["native"][1]["verified"] == true);
}

TEST_CASE("an extension built for another torch is rejected, naming the missing symbol") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "");
    fs::copy_file(test_data("torch/lib/libc10.so"), site_packages_of(python) + "/torch/lib/libc10.so");
    install_extension(python, "flash_attn", "2.8.3", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                      "extensions/extension_missing.so");
    const auto result = check(dir, python, e2e::gpu_fixture("a100"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] != "flash2");
    CHECK(report["verdict"] == "degraded");
    const std::string why = reasons_of(report, "flash2");
    CHECK(why.find("c10::cuda::ExchangeDevice(int)") != std::string::npos);
    CHECK(why.find("torch 2.8.0+cu128") != std::string::npos);
    const auto found = finding(report, "torch_abi_mismatch");
    CHECK(found["level"] == "degraded");
    CHECK(found["message"].get<std::string>().find("_ZN3c104cuda14ExchangeDeviceEi") != std::string::npos);
    reliability::record("native code", "flash-attn needing c10::cuda::ExchangeDevice(int), which torch lacks",
                        "flash2 is rejected naming the symbol demangled and the torch version; selection falls "
                        "back, degraded",
                        "nothing");
}

TEST_CASE("an extension whose torch symbols torch exports is accepted") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "");
    fs::copy_file(test_data("torch/lib/libc10.so"), site_packages_of(python) + "/torch/lib/libc10.so");
    install_extension(python, "flash_attn", "2.8.3", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                      "extensions/extension_ok.so");
    const auto result = check(dir, python, e2e::gpu_fixture("a100"));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK(finding(report, "torch_abi_mismatch").is_null());
}

TEST_CASE("xformers built for another torch is rejected, as xFormers itself would refuse to load") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.11.0+cu130", "13.0", "");
    install_extension(python, "xformers", "0.0.29", "xformers/_C.so", "extensions/extension_ok.so");
    e2e::write_file(site_packages_of(python) + "/xformers/cpp_lib.json",
                    R"({"version": {"cuda": 1204, "torch": "2.5.1+cu124", "python": "3.12.3"}})");
    const auto result = check(dir, python, e2e::gpu_fixture("t4"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "sdpa");
    CHECK(reasons_of(report, "xformers").find("built for PyTorch 2.5.1+cu124") != std::string::npos);
    CHECK(finding(report, "torch_abi_mismatch")["level"] == "degraded");
    CHECK(report["native"][1]["cuda"] == "12.4");
}

TEST_CASE("xformers built with a CUDA newer than the driver is rejected, naming the driver needed") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.7.0+cu126", "12.6", "");
    install_extension(python, "xformers", "0.0.33", "xformers/_C.so", "extensions/extension_ok.so");
    e2e::write_file(site_packages_of(python) + "/xformers/cpp_lib.json",
                    R"({"version": {"cuda": 1300, "torch": "2.7.0+cu126"}})");
    const auto result = check(dir, python, machine(dir, "Tesla T4", "7.5", "12.8"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "sdpa");
    const auto found = finding(report, "driver_too_old");
    CHECK(found["level"] == "degraded");
    CHECK(found["message"].get<std::string>().find("580.65.06") != std::string::npos);
}

TEST_CASE("an extension whose modules are not listed is reported unverified and still counts") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "");
    write_dist_info(site_packages_of(python), "flash_attn", "2.8.3");
    const auto result = check(dir, python, e2e::gpu_fixture("a100"));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK(report["verdict"] == "ok");
    REQUIRE(report["native"].size() == 2);
    CHECK(report["native"][1]["verified"] == false);
}

TEST_CASE("a V100 with a cu130 torch is refused, naming the last CUDA 12.8 wheels that carry sm_70") {
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    const auto result = check(dir, torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libtorch_cuda.so"),
                              e2e::gpu_fixture("v100"));
    CHECK(result.exit_code == 5);
    CHECK(result.err.find("sm_70") != std::string::npos);
    CHECK(result.err.find("torch>=2.7,<2.9 from https://download.pytorch.org/whl/cu128") != std::string::npos);
}

TEST_CASE("CUDA forward-compatibility libraries on LD_LIBRARY_PATH are reported, degraded") {
    e2e::TempDir dir;
    const std::string compat = dir.file("cuda-12.9/compat");
    fs::create_directories(compat);
    e2e::write_file(compat + "/libcuda.so.575.51.03", "");
    e2e::write_file(compat + "/libcuda.so.1", "");
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "");
    const auto run = [&](const std::string& library_path) {
        return e2e::provision({"--json", "--gpu-fixture", e2e::gpu_fixture("rtx5090"), "--no-validate", "--python",
                               python, "--env-file", dir.file("env")},
                              {{"PATH", dir.file("no-bin")}, {"HOME", dir.file("no-home")},
                               {"LD_LIBRARY_PATH", library_path}});
    };
    const auto result = run("/usr/lib:" + compat + "/");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto found = finding(report, "cuda_compat_libs");
    CHECK(found["level"] == "degraded");
    const std::string message = found["message"];
    CHECK(message.find(compat) != std::string::npos);
    CHECK(message.find("575.51.03") != std::string::npos);
    CHECK(message.find("error 804") != std::string::npos);
    reliability::record("native code", "LD_LIBRARY_PATH names /usr/local/cuda-X.Y/compat (a forward-compatibility "
                        "libcuda that is not the driver's)",
                        "a cuda_compat_libs finding naming the folder and errors 803/804; degraded", "nothing");

    // A compat folder elsewhere on the path that holds no libcuda, or any other folder, is no finding.
    const auto clean = run(dir.file("cuda-12.9/lib64") + ":" + dir.file("empty/compat"));
    CHECK(finding(e2e::report(clean), "cuda_compat_libs").is_null());
    CHECK(e2e::report(clean)["verdict"] == "ok");
}

TEST_CASE("a Blackwell GPU needs a Triton that compiles for it: an older one rejects sage and flex") {
    e2e::TempDir dir;
    const std::string site = dir.file("site");
    for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
             {"torch", "2.6.0"}, {"triton", "3.2.0"}, {"sageattention", "2.2.0"}})
        write_dist_info(site, name, version);
    const auto result = e2e::provision({"--json", "--gpu-fixture", e2e::gpu_fixture("b200"), "--no-validate",
                                        "--site-packages", site, "--env-file", dir.file("env")});
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "sdpa");
    CHECK(reasons_of(report, "sage").find("triton>=3.3 (triton 3.2.0 installed)") != std::string::npos);
    CHECK(reasons_of(report, "flex").find("triton>=3.3") != std::string::npos);

    // On Hopper the same Triton serves.
    const auto hopper = e2e::provision({"--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate",
                                        "--site-packages", site, "--env-file", dir.file("env")});
    CHECK(e2e::report(hopper)["selected"]["mechanism"] == "sage");
}

TEST_CASE("an extension that runs only through PTX JIT stays selectable, degraded") {
    if (!have_cuda_test_data()) return;
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.11.0+cu130", "13.0", "cuda/libvariants.so");
    install_extension(python, "flash_attn", "2.8.3", "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
                      "cuda/libptx.so");
    const auto result = check(dir, python, machine(dir, "NVIDIA GeForce RTX 5090", "12.0", "13.0"));
    INFO(result.err);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK(report["verdict"] == "degraded");
    CHECK(report["native"][1]["gpus"][0]["runs"] == "ptx-jit");
    CHECK(finding(report, "ptx_jit_only")["message"].get<std::string>().find("flash_attn") != std::string::npos);
}

TEST_CASE("the CUDA runtime wheel torch loads is held against the driver") {
    e2e::TempDir dir;
    const auto python = torch_venv(dir, "2.8.0+cu128", "12.8", "");
    const std::string site = site_packages_of(python);
    const auto add_wheel = [&](const std::string& name, const std::string& version) {
        write_dist_info(site, name, version);
    };
    // A newer minor runs through minor-version compatibility: no finding.
    add_wheel("nvidia-cuda-runtime-cu12", "12.9.79");
    const auto minor = check(dir, python, machine(dir, "NVIDIA H100 80GB HBM3", "9.0", "12.8"));
    INFO(minor.err);
    CHECK(minor.exit_code == 0);
    CHECK(finding(e2e::report(minor), "driver_too_old").is_null());

    // A newer major never runs.
    add_wheel("nvidia-cuda-runtime", "13.0.96");
    const auto major = check(dir, python, machine(dir, "NVIDIA H100 80GB HBM3", "9.0", "12.8"));
    INFO(major.err);
    CHECK(major.exit_code == 5);
    const auto found = finding(e2e::report(major), "driver_too_old");
    CHECK(found["level"] == "failed");
    const std::string message = found["message"];
    CHECK(message.find("nvidia-cuda-runtime 13.0.96") != std::string::npos);
    CHECK(message.find("580.65.06") != std::string::npos);
}
