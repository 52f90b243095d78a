// The attention mechanisms of 2026 (FlashAttention 4, FlashInfer, cuDNN) and
// Blackwell's two families, end to end: simulated machines of each family and
// fake site-packages trees holding each package as a user installs it, too
// old, built for the wrong family, or without what it needs (the CuTe DSL,
// FlashInfer's prebuilt kernels).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness.h"
#include "support/synthetic_elf.h"

using e2e::candidate;
using e2e::reasons_of;

namespace {

namespace fs = std::filesystem;

// A site-packages folder built file by file.
class Site {
public:
    Site(const e2e::TempDir& dir, const std::string& name) : root_(dir.file(name)) { fs::create_directories(root_); }

    const std::string& path() const { return root_; }

    // NAME-VERSION.dist-info with METADATA, and a RECORD listing `files`
    // (path relative to site-packages -> bytes), which are written too.
    Site& install(const std::string& name, const std::string& version,
                  const std::map<std::string, std::string>& files = {}) {
        const std::string dist_info = fmt::format("{}/{}-{}.dist-info", root_, name, version);
        fs::create_directories(dist_info);
        e2e::write_file(dist_info + "/METADATA",
                        fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
        if (files.empty()) return *this;
        std::string record;
        for (const auto& [relative, bytes] : files) {
            const fs::path file = fs::path(root_) / relative;
            fs::create_directories(file.parent_path());
            e2e::write_file(file.string(), bytes);
            record += fmt::format("{},sha256=x,{}\n", relative, bytes.size());
        }
        record += fmt::format("{}-{}.dist-info/RECORD,,\n", name, version);
        e2e::write_file(dist_info + "/RECORD", record);
        return *this;
    }

    // torch's own files: its build, as torch/version.py states it.
    Site& torch(const std::string& version, const std::string& cuda) {
        install("torch", version);
        fs::create_directories(root_ + "/torch/lib");
        e2e::write_file(root_ + "/torch/version.py",
                        fmt::format("__version__ = '{}'\ncuda: Optional[str] = '{}'\nhip: Optional[str] = None\n",
                                    version, cuda));
        return *this;
    }

private:
    std::string root_;
};

std::string machine(const e2e::TempDir& dir, const std::string& name, const std::string& capability,
                    const std::string& driver_cuda = "13.0") {
    const std::string path = dir.file(fmt::format("machine-{}-{}.toml", capability, driver_cuda));
    e2e::write_file(path, fmt::format("[driver]\nversion = \"580.95.05\"\ncuda = \"{}\"\n\n[[gpus]]\nname = \"{}\"\n"
                                      "compute_capability = \"{}\"\nmemory_mib = 81559\n",
                                      driver_cuda, name, capability));
    return path;
}

e2e::Result run(const e2e::TempDir& dir, const std::string& fixture, const Site& site,
                const std::vector<std::string>& more = {}, const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> args{"--json", "--no-validate", "--gpu-fixture", fixture, "--site-packages",
                                  site.path(), "--env-file", dir.file("env")};
    args.insert(args.end(), more.begin(), more.end());
    return e2e::provision(args, env);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// FlashAttention 4 as pip installs it: the package, its DSL, torch.
Site& with_flash4(Site& site, const std::string& dsl_version = "4.7.1") {
    return site.install("flash_attn_4", "4.0.0b8").install("nvidia_cutlass_dsl", dsl_version);
}

// FlashInfer with its JIT cache (one module whose device code carries
// `targets`) and its cubins (one per `cubin_sm`).
Site& with_flashinfer(Site& site, const std::vector<synthetic_elf::FatbinTarget>& targets,
                      const std::vector<std::uint32_t>& cubin_sm, const std::string& version = "0.6.18",
                      const std::string& cuda_label = "cu130") {
    site.install("flashinfer_python", version);
    site.install("flashinfer_jit_cache", fmt::format("{}+{}", version, cuda_label),
                 {{"flashinfer_jit_cache/jit_cache/batch_prefill/batch_prefill.so",
                   synthetic_elf::library_with_device_code(targets, 4)}});
    std::map<std::string, std::string> cubins;
    for (const auto sm : cubin_sm)
        cubins[fmt::format("flashinfer_cubin/cubins/fmha/trtllm-gen/fmhaSm{}aKernel.cubin", sm)] =
            synthetic_elf::cubin(sm);
    if (!cubins.empty()) site.install("flashinfer_cubin", version, cubins);
    return site;
}

// FlashInfer's JIT cache as the x86_64 release builds it (ci/cuda-versions.json).
const std::vector<synthetic_elf::FatbinTarget> kJitCacheTargets = {
    {75, 0}, {80, 0}, {89, 0}, {90, synthetic_elf::kArchSpecific}, {100, synthetic_elf::kArchSpecific},
    {103, synthetic_elf::kArchSpecific}, {120, synthetic_elf::kFamily}};

}  // namespace

TEST_CASE("Blackwell's fixtures classify into its two families, one family name") {
    const std::vector<std::tuple<std::string, std::string, std::string>> rows = {
        {"b200", "blackwell_datacenter", "10.0"},
        {"gb300", "blackwell_datacenter", "10.3"},
        {"b300", "blackwell_datacenter", "10.3"},
        {"thor", "blackwell_datacenter", "11.0"},
        {"rtx5090", "blackwell_consumer", "12.0"},
        {"gb10", "blackwell_consumer", "12.1"},
        {"h100", "hopper", "9.0"},
    };
    for (const auto& [fixture, architecture, capability] : rows) {
        INFO(fixture);
        e2e::TempDir dir;
        const auto result = e2e::provision({"--json", "--gpu-fixture", e2e::gpu_fixture(fixture), "--site-packages",
                                            e2e::site_packages("torch-only"), "--env-file", dir.file("env")});
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["compute_capability"] == capability);
        CHECK(report["gpus"][0]["architecture"] == architecture);
        CHECK(report["gpus"][0]["family"] == (architecture == "hopper" ? "hopper" : "blackwell"));
        CHECK(report["selected"]["reason"].get<std::string>().find(architecture == "hopper" ? "hopper" : "blackwell_") !=
              std::string::npos);
    }
}

TEST_CASE("the generic workload takes FlashAttention 4 first on datacenter Blackwell, after FA2 on consumer") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("flash_attn", "2.8.3").install("sageattention", "2.2.0").install(
        "triton", "3.6.0");
    with_flash4(site);
    for (const auto& [fixture, expected] : std::vector<std::pair<std::string, std::string>>{
             {"b200", "flash4"}, {"gb300", "flash4"}, {"rtx5090", "sage"}, {"gb10", "sage"}}) {
        INFO(fixture);
        const auto result = run(dir, e2e::gpu_fixture(fixture), site);
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["selected"]["mechanism"] == expected);
        if (expected == "sage") {
            // Consumer Blackwell orders FA4 after FA2 and SageAttention: it is
            // accepted, just not first.
            REQUIRE(candidate(report, "flash4"));
            CHECK((*candidate(report, "flash4"))["accepted"] == true);
        }
    }
}

TEST_CASE("FlashAttention 4 without its DSL, or with one too old, is rejected naming it") {
    e2e::TempDir dir;
    Site missing(dir, "missing");
    missing.torch("2.11.0+cu130", "13.0").install("flash_attn_4", "4.0.0b8");
    const auto without = e2e::report(run(dir, e2e::gpu_fixture("b200"), missing));
    CHECK(without["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(without, "flash4"), "needs nvidia-cutlass-dsl>=4.6.2 (not installed)"));

    Site old(dir, "old");
    old.torch("2.11.0+cu130", "13.0");
    with_flash4(old, "4.5.1");
    const auto too_old = e2e::report(run(dir, e2e::gpu_fixture("b200"), old));
    CHECK(too_old["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(too_old, "flash4"), "nvidia-cutlass-dsl>=4.6.2 (nvidia_cutlass_dsl 4.5.1 installed)"));
}

TEST_CASE("FlashAttention 4's DSL needs the driver of its CUDA: 12.9, or 13 for the cu13 build") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.8.0+cu128", "12.8");
    with_flash4(site);
    const auto old_driver = e2e::report(run(dir, machine(dir, "NVIDIA B200", "10.0", "12.8"), site));
    CHECK(old_driver["selected"]["mechanism"] != "flash4");
    CHECK(has(reasons_of(old_driver, "flash4"), "needs a driver for CUDA 12.9 or newer; this driver supports CUDA 12.8"));

    site.install("nvidia_cutlass_dsl_libs_cu13", "4.7.1");
    const auto cu13 = e2e::report(run(dir, machine(dir, "NVIDIA B200", "10.0", "12.9"), site));
    CHECK(cu13["selected"]["mechanism"] != "flash4");
    CHECK(has(reasons_of(cu13, "flash4"),
              "needs a driver for CUDA 13.0 or newer (nvidia_cutlass_dsl_libs_cu13 4.7.1 is installed); this driver "
              "supports CUDA 12.9"));
    const auto new_driver = e2e::report(run(dir, machine(dir, "NVIDIA B200", "10.0", "13.0"), site));
    CHECK(new_driver["selected"]["mechanism"] == "flash4");
}

TEST_CASE("FlashAttention 4 asked for on a GPU older than Ampere is refused, naming its range") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu126", "12.6");
    with_flash4(site);
    const auto result = run(dir, e2e::gpu_fixture("t4"), site, {}, {{"PROVISION_ATTENTION", "fa4"}});
    CHECK(result.exit_code == 4);
    CHECK(has(result.err, "compute capability 8.0 to 12.9"));
}

TEST_CASE("--explain names the mechanism that would be best here and what keeps it out, with no command") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0");
    const auto result = run(dir, e2e::gpu_fixture("b200"), site, {"--explain"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(e2e::report(result)["selected"]["mechanism"] == "sdpa");
    CHECK(has(result.err,
              "Best for these GPUs: flash4, ahead in the 'generic' workload's blackwell_datacenter order: the GPUs "
              "and the driver can run it, but needs flash-attn-4 (not installed); needs nvidia-cutlass-dsl>=4.6.2 "
              "(not installed)"));
    CHECK(has(result.err, "sdpa is selected instead"));
    CHECK(!has(result.err, "pip install"));

    // A GPU the best mechanism cannot run names none: on a T4 nothing ahead
    // of sdpa fits the hardware but xformers, which is not installed.
    const auto turing = run(dir, e2e::gpu_fixture("t4"), site, {"--explain"});
    CHECK(has(turing.err, "Best for these GPUs: xformers"));
    CHECK(!has(turing.err, "Best for these GPUs: flash4"));
}

TEST_CASE("vLLM on datacenter Blackwell takes FlashInfer first, with its prebuilt kernels and cubins") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("vllm", "0.21.0");
    with_flashinfer(site, kJitCacheTargets, {100, 103});
    const auto result = run(dir, e2e::gpu_fixture("gb300"), site, {"--workload", "vllm"});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flashinfer");
    CHECK(report["arguments"] == nlohmann::json::array({"--attention-backend=FLASHINFER"}));
    CHECK(report["env"]["PROVISION_VLLM_ATTENTION_BACKEND"] == "FLASHINFER");
    bool judged_cubins = false;
    for (const auto& package : report["native"]) {
        if (package["package"] == "flashinfer_jit_cache") {
            CHECK(package["cuda"] == "13.0");
            CHECK(package["gpus"][0]["runs"] == "sass");
        }
        if (package["package"] == "flashinfer_cubin") {
            judged_cubins = true;
            CHECK(package["gpus"][0]["runs"] == "sass");
        }
    }
    CHECK(judged_cubins);
}

TEST_CASE("FlashInfer's packages of two releases are rejected, as FlashInfer refuses to import them") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("vllm", "0.21.0").install("flashinfer_python", "0.6.18");
    site.install("flashinfer_jit_cache", "0.6.17+cu130").install("flashinfer_cubin", "0.6.18");
    const auto report = e2e::report(run(dir, e2e::gpu_fixture("b200"), site, {"--workload", "vllm"}));
    CHECK(report["selected"]["mechanism"] == "flash2");
    CHECK(has(reasons_of(report, "flashinfer"),
              "needs flashinfer_jit_cache and flashinfer_python of one release: flashinfer_jit_cache 0.6.17+cu130 is "
              "installed with flashinfer_python 0.6.18"));
}

TEST_CASE("FlashInfer without its JIT cache, or without cubins on datacenter Blackwell, is not chosen") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("sglang", "0.5.9").install("flashinfer_python", "0.6.18");
    const auto no_cache = e2e::report(run(dir, e2e::gpu_fixture("rtx5090"), site, {"--workload", "sglang"}));
    CHECK(no_cache["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(no_cache, "flashinfer"), "needs flashinfer-jit-cache (not installed)"));

    Site no_cubins(dir, "no-cubins");
    no_cubins.torch("2.11.0+cu130", "13.0").install("sglang", "0.5.9");
    with_flashinfer(no_cubins, kJitCacheTargets, {});
    const auto datacenter = e2e::report(run(dir, e2e::gpu_fixture("b200"), no_cubins, {"--workload", "sglang"}));
    CHECK(datacenter["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(datacenter, "flashinfer"), "needs flashinfer-cubin (not installed)"));
    // The consumer family needs no TRT-LLM cubins.
    const auto consumer = e2e::report(run(dir, e2e::gpu_fixture("rtx5090"), no_cubins, {"--workload", "sglang"}));
    CHECK(consumer["selected"]["mechanism"] == "flashinfer");
    CHECK(consumer["arguments"] == nlohmann::json::array({"--attention-backend=flashinfer"}));
}

TEST_CASE("a FlashInfer JIT cache built for datacenter Blackwell only does not run on the consumer family") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("sglang", "0.5.9");
    with_flashinfer(site, {{100, synthetic_elf::kArchSpecific}, {103, synthetic_elf::kArchSpecific}}, {100});
    const auto consumer = run(dir, e2e::gpu_fixture("rtx5090"), site, {"--workload", "sglang"});
    INFO(consumer.err);
    const auto report = e2e::report(consumer);
    CHECK(report["selected"]["mechanism"] == "sdpa");
    CHECK(report["verdict"] == "degraded");
    CHECK(has(reasons_of(report, "flashinfer"), "compute capability 12.0"));
    // sm_100a is exactly 10.0: a GB300 (10.3) runs the sm_103a code, a B200 the sm_100a.
    CHECK(e2e::report(run(dir, e2e::gpu_fixture("b200"), site, {"--workload", "sglang"}))["selected"]["mechanism"] ==
          "flashinfer");
    // 12.0f (the release's own family target) serves the DGX Spark's 12.1.
    Site family(dir, "family");
    family.torch("2.11.0+cu130", "13.0").install("sglang", "0.5.9");
    with_flashinfer(family, kJitCacheTargets, {});
    CHECK(e2e::report(run(dir, e2e::gpu_fixture("gb10"), family, {"--workload", "sglang"}))["selected"]["mechanism"] ==
          "flashinfer");
}

TEST_CASE("cubins for the datacenter family alone reject FlashInfer where they are needed on a GPU they miss") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("vllm", "0.21.0");
    // Jetson Thor (11.0) is datacenter Blackwell: it needs the cubins, and
    // sm_100 code does not run on it; the x86_64 JIT cache has no 11.0 code either.
    with_flashinfer(site, kJitCacheTargets, {100});
    const auto report = e2e::report(run(dir, e2e::gpu_fixture("thor"), site, {"--workload", "vllm"}));
    CHECK(report["selected"]["mechanism"] != "flashinfer");
    CHECK(has(reasons_of(report, "flashinfer"), "compute capability 11.0"));
}

TEST_CASE("a FlashInfer JIT cache built with CUDA 13 on a CUDA 12 driver is rejected, naming the driver") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.8.0+cu128", "12.8").install("sglang", "0.5.9");
    with_flashinfer(site, kJitCacheTargets, {}, "0.6.18", "cu130");
    const auto report = e2e::report(run(dir, machine(dir, "Tesla T4", "7.5", "12.8"), site, {"--workload", "sglang"}));
    CHECK(report["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(report, "flashinfer"), "built with CUDA 13.0; the driver runs CUDA 12.8 at most"));
}

TEST_CASE("cuDNN attention is chosen on Hopper only with a cuDNN of 9.15.1 or newer, read from torch's files") {
    e2e::TempDir dir;
    Site fresh(dir, "fresh");
    fresh.torch("2.11.0+cu130", "13.0").install("flash_attn", "2.8.3").install("nvidia_cudnn_cu13", "9.16.0.29");
    const auto chosen = e2e::report(run(dir, e2e::gpu_fixture("h100"), fresh));
    CHECK(chosen["selected"]["mechanism"] == "cudnn");
    CHECK(chosen["cudnn"]["version"] == "9.16.0.29");
    CHECK(chosen["cudnn"]["evidence"] == "nvidia_cudnn_cu13 9.16.0.29");

    Site old(dir, "old");
    old.torch("2.11.0+cu130", "13.0").install("flash_attn", "2.8.3").install("nvidia_cudnn_cu13", "9.13.0.50");
    const auto refused = e2e::report(run(dir, e2e::gpu_fixture("h100"), old));
    CHECK(refused["selected"]["mechanism"] == "flash2");
    CHECK(has(reasons_of(refused, "cudnn"),
              "needs cuDNN 9.15.1 or newer; torch loads cuDNN 9.13.0.50 (nvidia_cudnn_cu13 9.13.0.50)"));
}

TEST_CASE("a system cuDNN is read from its file name on the loader's path") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.10.0a0+nv25.10", "13.0");
    const std::string libraries = dir.file("cuda-libs");
    fs::create_directories(libraries);
    e2e::write_file(libraries + "/libcudnn.so.9", "");
    e2e::write_file(libraries + "/libcudnn.so.9.16.0", "");
    const auto report = e2e::report(
        run(dir, e2e::gpu_fixture("h100"), site, {"--workload", "diffusers"}, {{"LD_LIBRARY_PATH", libraries}}));
    CHECK(report["cudnn"]["version"] == "9.16.0");
    CHECK(report["cudnn"]["path"] == libraries + "/libcudnn.so.9.16.0");
    CHECK(report["selected"]["mechanism"] == "cudnn");
    CHECK(report["env"]["DIFFUSERS_ATTN_BACKEND"] == "_native_cudnn");
}

TEST_CASE("transformers gets flash_attention_4 on datacenter Blackwell, and never below Hopper") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0");
    with_flash4(site);
    const auto report = e2e::report(run(dir, e2e::gpu_fixture("b200"), site, {"--workload", "transformers"}));
    CHECK(report["selected"]["mechanism"] == "flash4");
    CHECK(report["env"]["PROVISION_ATTN_IMPLEMENTATION"] == "flash_attention_4");

    const auto ampere =
        run(dir, e2e::gpu_fixture("a100"), site, {"--workload", "transformers"}, {{"PROVISION_ATTENTION", "flash4"}});
    CHECK(ampere.exit_code == 4);
    CHECK(has(ampere.err, "compute capability 9.0 to 12.9"));
}

TEST_CASE("workloads that cannot be told to use a 2026 mechanism refuse it, saying so") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("sglang", "0.5.9").install("nvidia_cudnn_cu13", "9.16.0.29");
    with_flash4(site);
    for (const auto& [workload, mechanism] : std::vector<std::pair<std::string, std::string>>{
             {"sglang", "flash4"}, {"comfyui", "flash4"}, {"comfyui", "cudnn"}, {"vllm", "cudnn"},
             {"diffusers", "flash4"}, {"transformers", "flashinfer"}, {"generic", "flashinfer"}}) {
        INFO(workload << " " << mechanism);
        const auto result = run(dir, e2e::gpu_fixture("b200"), site, {"--workload", workload},
                                {{"PROVISION_ATTENTION", mechanism}});
        CHECK(result.exit_code == 4);
        CHECK(has(result.err, fmt::format("the '{}' workload cannot use {}", workload, mechanism)));
    }
}

TEST_CASE("the number formats tell Blackwell's families apart: MXFP8 on the datacenter family only") {
    const std::vector<std::tuple<std::string, std::string, std::string>> rows = {
        {"b200", "unverified", "unverified"},
        {"gb300", "unverified", "unverified"},
        {"rtx5090", "unsupported", "unverified"},
        {"gb10", "unsupported", "unverified"},
        {"h100", "unsupported", "unsupported"},
    };
    for (const auto& [fixture, mxfp8, nvfp4] : rows) {
        INFO(fixture);
        e2e::TempDir dir;
        const auto result = e2e::provision({"--json", "--explain", "--gpu-fixture", e2e::gpu_fixture(fixture),
                                            "--site-packages", e2e::site_packages("torch-only"), "--env-file",
                                            dir.file("env")});
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["formats"]["mxfp8"] == mxfp8);
        CHECK(report["formats"]["nvfp4"] == nvfp4);
    }
}

// Rubin, 10.7 (recipes/architectures.toml): an architecture and a family of
// its own, ordered as datacenter Blackwell, and only with the R615 driver
// (CUDA 13.4) that runs its kernels.
TEST_CASE("the Rubin fixture classifies as rubin and takes the rubin order in every workload") {
    const std::vector<std::pair<std::string, std::string>> workloads = {
        {"generic", "sdpa"}, {"transformers", "sdpa"}, {"diffusers", "sdpa"}, {"comfyui", "sdpa"},
        {"sglang", "sdpa"},  {"vllm", "flash2"}};  // vLLM's own FA2 build
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0").install("triton", "3.6.0").install("vllm", "0.20.0").install("sglang", "0.5.4");
    for (const auto& [workload, expected] : workloads) {
        INFO(workload);
        const auto result = run(dir, e2e::gpu_fixture("rubin"), site, {"--workload", workload});
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["compute_capability"] == "10.7");
        CHECK(report["gpus"][0]["architecture"] == "rubin");
        CHECK(report["gpus"][0]["family"] == "rubin");
        CHECK(report["selected"]["preference"] == "rubin");
        CHECK(report["selected"]["mechanism"] == expected);
    }
}

TEST_CASE("on Rubin FlashAttention 4 needs the CuTe DSL of CUTLASS 4.8, as on datacenter Blackwell it comes first") {
    e2e::TempDir dir;
    Site old(dir, "old");
    old.torch("2.11.0+cu130", "13.0");
    with_flash4(old, "4.7.1");
    const auto too_old = e2e::report(run(dir, e2e::gpu_fixture("rubin"), old));
    CHECK(too_old["selected"]["mechanism"] == "sdpa");
    CHECK(has(reasons_of(too_old, "flash4"), "nvidia-cutlass-dsl>=4.8"));
    // The same packages serve a B200.
    CHECK(e2e::report(run(dir, e2e::gpu_fixture("b200"), old))["selected"]["mechanism"] == "flash4");

    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0");
    with_flash4(site, "4.8.0");
    for (const std::string workload : {"generic", "transformers"}) {
        INFO(workload);
        CHECK(e2e::report(run(dir, e2e::gpu_fixture("rubin"), site, {"--workload", workload}))["selected"]["mechanism"] ==
              "flash4");
    }
}

TEST_CASE("Rubin's kernels need the driver of CUDA 13.4: an older one serves no GPU mechanism") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0");
    const auto report = e2e::report(run(dir, machine(dir, "NVIDIA Rubin", "10.7", "13.0"), site));
    CHECK(report["gpus"][0]["architecture"] == "rubin");
    CHECK(report["selected"]["mechanism"] == "eager");
    CHECK(has(reasons_of(report, "sdpa"), "needs a driver for CUDA 13.4 or newer"));
}

TEST_CASE("on Rubin FlashInfer's JIT cache of 10.0a and 10.3a code does not run") {
    e2e::TempDir dir;
    Site site(dir, "site");
    site.torch("2.11.0+cu130", "13.0");
    with_flashinfer(site, kJitCacheTargets, {100, 103});
    const auto report = e2e::report(run(dir, e2e::gpu_fixture("rubin"), site, {"--workload", "vllm"}));
    CHECK(report["selected"]["mechanism"] != "flashinfer");
    REQUIRE(candidate(report, "flashinfer"));
    CHECK((*candidate(report, "flashinfer"))["accepted"] == false);
}
