// The sglang recipe end to end: `--attention-backend` appended to
// `python -m sglang.launch_server` on every GPU family, the FlashAttention
// kernels counted as sgl-kernel's, no allocator setting, the user's own
// backend flags, and the overrides.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

using workload_e2e::Expectation;

namespace {

const std::vector<std::string> kCommand{"-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-0.6B"};
const std::vector<std::string> kNeverSet{"PYTORCH_CUDA_ALLOC_CONF"};

Expectation gpu(const std::string& family, const std::string& mechanism, const std::string& backend) {
    return {family,
            mechanism,
            {"--attention-backend=" + backend},
            {{"PROVISION_SGLANG_ATTENTION_BACKEND", backend}},
            kNeverSet};
}

// Turing and Volta have no bf16, and SGLang's --dtype auto would keep a bf16
// checkpoint in bf16 there: the recipe adds --dtype=half.
Expectation without_bf16(const std::string& family) {
    Expectation row = gpu(family, "sdpa", "torch_native");
    row.appended.push_back("--dtype=half");
    row.set["PROVISION_DTYPE"] = "float16";
    return row;
}

Expectation cpu() { return {"cpu", "eager", {}, {}, {"PYTORCH_CUDA_ALLOC_CONF", "PROVISION_SGLANG_ATTENTION_BACKEND"}}; }

// A site-packages tree `base` plus sglang and its kernel package.
std::vector<std::string> with_sglang(const e2e::TempDir& dir, const std::string& base) {
    return {e2e::site_packages(base),
            workload_e2e::site_packages(dir, "sglang", {"sglang==0.5.9", "sgl_kernel==0.3.21"})};
}

const std::vector<Expectation>& reference_rows() {
    static const std::vector<Expectation> rows = {
        gpu("blackwell", "sdpa", "torch_native"), gpu("hopper", "flash3", "fa3"), gpu("ada", "flash2", "fa3"),
        gpu("ampere", "flash2", "fa3"),           without_bf16("turing"),
        without_bf16("volta"),                    cpu()};
    return rows;
}

}  // namespace

TEST_CASE("sglang, all packages: fa3 from Ampere to Hopper, torch_native elsewhere") {
    e2e::TempDir packages;
    for (const auto& row : reference_rows())
        workload_e2e::expect_handoff("sglang", with_sglang(packages, "all"), kCommand, row);
}

TEST_CASE("sglang, torch only: the same, since fa3 comes inside sgl-kernel") {
    e2e::TempDir packages;
    for (const auto& row : reference_rows())
        workload_e2e::expect_handoff("sglang", with_sglang(packages, "torch-only"), kCommand, row);
}

TEST_CASE("sglang: nothing serves below compute capability 7.0, or without sglang") {
    e2e::TempDir dir;
    SECTION("Pascal") {
        const auto handoff = workload_e2e::hand_off(
            workload_e2e::options(dir, "sglang", "pascal", with_sglang(dir, "all")), kCommand, {});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
    }
    SECTION("Hopper without sglang") {
        const auto handoff = workload_e2e::hand_off(
            workload_e2e::options(dir, "sglang", "hopper", {e2e::site_packages("all")}), kCommand, {});
        CHECK(handoff.result.exit_code == 4);
    }
    SECTION("Hopper without sgl-kernel: torch_native") {
        const auto bare = workload_e2e::site_packages(dir, "bare", {"sglang==0.5.9"});
        workload_e2e::expect_handoff("sglang", {e2e::site_packages("all"), bare}, kCommand,
                                     gpu("hopper", "sdpa", "torch_native"));
    }
}

TEST_CASE("sglang: a backend the user chose on the command line is kept, and provision adds none") {
    e2e::TempDir dir;
    const auto options = workload_e2e::options(dir, "sglang", "hopper", with_sglang(dir, "all"));
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"-m", "sglang.launch_server", "--attention-backend", "flashinfer"},
             {"-m", "sglang.launch_server", "--attention-backend=triton"},
             {"-m", "sglang.launch_server", "--prefill-attention-backend", "fa4"},
             {"-m", "sglang.launch_server", "--decode-attention-backend=trtllm_mha"}}) {
        INFO(command.back());
        const auto handoff = workload_e2e::hand_off(options, command, {});
        CHECK(handoff.result.exit_code == 0);
        CHECK(handoff.arguments == command);
    }
}

TEST_CASE("sglang: PROVISION_ATTENTION picks the backend") {
    e2e::TempDir packages;
    SECTION("flex_attention on Ampere") {
        workload_e2e::expect_handoff("sglang", with_sglang(packages, "all"), kCommand,
                                     gpu("ampere", "flex", "flex_attention"), {{"PROVISION_ATTENTION", "flex"}});
    }
    SECTION("torch_native on Hopper") {
        workload_e2e::expect_handoff("sglang", with_sglang(packages, "all"), kCommand,
                                     gpu("hopper", "sdpa", "torch_native"), {{"PROVISION_ATTENTION", "sdpa"}});
    }
    SECTION("flash2 on Hopper is refused: SGLang's fa3 there is the Hopper kernel") {
        e2e::TempDir dir;
        const auto handoff =
            workload_e2e::hand_off(workload_e2e::options(dir, "sglang", "hopper", with_sglang(packages, "all")),
                                   kCommand, {}, {{"PROVISION_ATTENTION", "flash2"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
    }
}

TEST_CASE("sglang with FlashInfer's prebuilt kernels: flashinfer wherever SGLang itself picks it") {
    e2e::TempDir packages;
    const std::vector<std::string> dirs = {
        e2e::site_packages("all"),
        workload_e2e::site_packages(packages, "flashinfer",
                                    {"sglang==0.5.9", "sgl_kernel==0.3.21", "flashinfer_python==0.6.18",
                                     "flashinfer_jit_cache==0.6.18+cu130", "flashinfer_cubin==0.6.18"})};
    for (const char* family : {"blackwell", "blackwell_consumer", "ada", "ampere"})
        workload_e2e::expect_handoff("sglang", dirs, kCommand, gpu(family, "flashinfer", "flashinfer"));
    // Hopper: fa3 stays first, as SGLang's own default there.
    workload_e2e::expect_handoff("sglang", dirs, kCommand, gpu("hopper", "flash3", "fa3"));
    Expectation turing = gpu("turing", "flashinfer", "flashinfer");
    turing.appended.push_back("--dtype=half");
    turing.set["PROVISION_DTYPE"] = "float16";
    workload_e2e::expect_handoff("sglang", dirs, kCommand, turing);
}
