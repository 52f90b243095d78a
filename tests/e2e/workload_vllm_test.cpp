// The vllm recipe end to end: `--attention-backend` and the FlashAttention
// version appended to `vllm serve` on every GPU family, the kernels counted
// as vLLM's own (no flash-attn package needed), no allocator setting, the
// user's own backend flags, and the overrides.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

using workload_e2e::Expectation;

namespace {

const std::vector<std::string> kCommand{"serve", "Qwen/Qwen3-0.6B", "--port", "8000"};
const std::vector<std::string> kFa3{"--attention-backend=FLASH_ATTN", "--attention-config.flash_attn_version=3"};
const std::vector<std::string> kFa2{"--attention-backend=FLASH_ATTN", "--attention-config.flash_attn_version=2"};
const std::vector<std::string> kFlex{"--attention-backend=FLEX_ATTENTION"};
// vLLM keeps its own allocator; VLLM_ATTENTION_BACKEND is not vLLM >= 0.13's knob.
const std::vector<std::string> kNeverSet{"PYTORCH_CUDA_ALLOC_CONF", "VLLM_ATTENTION_BACKEND"};

Expectation flash(const std::string& family, const std::string& mechanism) {
    const bool fa3 = mechanism == "flash3";
    return {family,
            mechanism,
            fa3 ? kFa3 : kFa2,
            {{"PROVISION_VLLM_ATTENTION_BACKEND", "FLASH_ATTN"}, {"PROVISION_VLLM_FLASH_ATTN_VERSION", fa3 ? "3" : "2"}},
            kNeverSet};
}

Expectation flex(const std::string& family) {
    auto unset = kNeverSet;
    unset.push_back("PROVISION_VLLM_FLASH_ATTN_VERSION");
    return {family, "flex", kFlex, {{"PROVISION_VLLM_ATTENTION_BACKEND", "FLEX_ATTENTION"}}, unset};
}

Expectation cpu() {
    auto unset = kNeverSet;
    unset.insert(unset.end(), {"PROVISION_VLLM_ATTENTION_BACKEND", "PROVISION_VLLM_FLASH_ATTN_VERSION"});
    return {"cpu", "eager", {}, {}, unset};
}

// A site-packages tree `base` plus vllm itself.
std::vector<std::string> with_vllm(const e2e::TempDir& dir, const std::string& base) {
    return {e2e::site_packages(base), workload_e2e::site_packages(dir, "vllm", {"vllm==0.26.0"})};
}

const std::vector<Expectation>& reference_rows() {
    static const std::vector<Expectation> rows = {flash("blackwell", "flash2"), flash("hopper", "flash3"),
                                                  flash("ada", "flash2"),       flash("ampere", "flash2"),
                                                  flex("turing"),              flex("volta"),
                                                  cpu()};
    return rows;
}

}  // namespace

TEST_CASE("vllm, all packages: FA3 on Hopper, FA2 on Blackwell/Ada/Ampere, FlexAttention on Turing/Volta") {
    e2e::TempDir packages;
    for (const auto& row : reference_rows())
        workload_e2e::expect_handoff("vllm", with_vllm(packages, "all"), kCommand, row);
}

TEST_CASE("vllm, torch only: the same, since FlashAttention comes inside the vllm wheel") {
    e2e::TempDir packages;
    for (const auto& row : reference_rows())
        workload_e2e::expect_handoff("vllm", with_vllm(packages, "torch-only"), kCommand, row);
}

TEST_CASE("vllm below compute capability 7.0, or not installed: nothing can serve, and --explain says why") {
    e2e::TempDir dir;
    const auto explained = [&](const std::string& family, const std::vector<std::string>& packages) {
        return workload_e2e::joined(workload_e2e::options(dir, "vllm", family, packages), {"--explain"});
    };
    SECTION("Pascal") {
        const auto handoff = workload_e2e::hand_off(
            explained("pascal", with_vllm(dir, "all")), kCommand, {});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
        CHECK_THAT(handoff.result.err, Catch::Contains("is outside compute capability 7.0 or newer"));
    }
    SECTION("an Ampere GPU without vllm in site-packages") {
        const auto handoff = workload_e2e::hand_off(
            explained("ampere", {e2e::site_packages("all")}), kCommand, {});
        CHECK(handoff.result.exit_code == 4);
        CHECK_THAT(handoff.result.err, Catch::Contains("needs vllm>=0.13 (not installed)"));
    }
    SECTION("a vllm release older than the recipe's target") {
        const auto old = workload_e2e::site_packages(dir, "old-vllm", {"vllm==0.11.2"});
        const auto handoff = workload_e2e::hand_off(
            explained("hopper", {e2e::site_packages("all"), old}), kCommand, {});
        CHECK(handoff.result.exit_code == 4);
        CHECK_THAT(handoff.result.err, Catch::Contains("vllm 0.11.2 installed"));
    }
}

TEST_CASE("vllm: a backend the user chose on the command line is kept, and provision adds none") {
    e2e::TempDir dir;
    const auto options = workload_e2e::options(dir, "vllm", "hopper", with_vllm(dir, "all"));
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"serve", "m", "--attention-backend", "FLASHINFER"},
             {"serve", "m", "--attention-backend=TRITON_ATTN"},
             {"serve", "m", "--attention_backend", "auto"},
             {"serve", "m", "-ac.backend", "FLASHINFER"},
             {"serve", "m", "--attention-config", "{\"backend\": \"FLASHINFER\"}"},
             {"serve", "m", "--attention-config.flash_attn_version", "2"}}) {
        INFO(command.back());
        const auto handoff = workload_e2e::hand_off(options, command, {});
        CHECK(handoff.result.exit_code == 0);
        CHECK(handoff.arguments == command);
    }
}

TEST_CASE("vllm: PROVISION_ATTENTION picks the backend") {
    e2e::TempDir packages;
    SECTION("FA2 on Hopper, pinned so vLLM does not take FA3") {
        workload_e2e::expect_handoff("vllm", with_vllm(packages, "torch-only"), kCommand, flash("hopper", "flash2"),
                                     {{"PROVISION_ATTENTION", "fa2"}});
    }
    SECTION("FlexAttention on Ampere") {
        workload_e2e::expect_handoff("vllm", with_vllm(packages, "all"), kCommand, flex("ampere"),
                                     {{"PROVISION_ATTENTION", "flex"}});
    }
    SECTION("flash3 on an Ada GPU is refused") {
        e2e::TempDir dir;
        const auto handoff =
            workload_e2e::hand_off(workload_e2e::options(dir, "vllm", "ada", with_vllm(packages, "all")), kCommand,
                                   {}, {{"PROVISION_ATTENTION", "flash3"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
    }
}

TEST_CASE("vllm: the user's own allocator setting still reaches vLLM, and the env file leaves it out") {
    e2e::TempDir dir;
    const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "vllm", "ampere", with_vllm(dir, "all")),
                                                kCommand, {"PYTORCH_CUDA_ALLOC_CONF"},
                                                {{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512"}});
    REQUIRE(handoff.result.exit_code == 0);
    CHECK(handoff.env.at("PYTORCH_CUDA_ALLOC_CONF") == "max_split_size_mb:512");
    CHECK(e2e::source_env_file(dir.file(".env_settings"), {"PYTORCH_CUDA_ALLOC_CONF"})
              .at("PYTORCH_CUDA_ALLOC_CONF")
              .empty());
}

TEST_CASE("vllm: with nothing to serve, the summary says why even without --explain") {
    e2e::TempDir dir;
    const auto handoff =
        workload_e2e::hand_off(workload_e2e::options(dir, "vllm", "ampere", {e2e::site_packages("all")}), kCommand, {});
    CHECK(handoff.result.exit_code == 4);
    CHECK_THAT(handoff.result.err, Catch::Contains("[rejected] flash2"));
    CHECK_THAT(handoff.result.err, Catch::Contains("[rejected] flex"));
    CHECK_THAT(handoff.result.err, Catch::Contains("needs vllm>=0.13 (not installed)"));
}

TEST_CASE("vllm: a mechanism vLLM has no backend for is refused, unless forced") {
    e2e::TempDir dir;
    const auto options = workload_e2e::options(dir, "vllm", "ampere", with_vllm(dir, "all"));
    SECTION("sdpa: exit 4, naming what vLLM accepts") {
        const auto handoff = workload_e2e::hand_off(options, kCommand, {}, {{"PROVISION_ATTENTION", "sdpa"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
        CHECK_THAT(handoff.result.err, Catch::Contains("the 'vllm' workload cannot use sdpa"));
        CHECK_THAT(handoff.result.err, Catch::Contains("accepts: eager, flash2, flash3, flash4, flashinfer, flex"));
    }
    SECTION("forced: handed off with a warning and no backend flag") {
        const auto handoff = workload_e2e::hand_off(options, kCommand, {"PROVISION_ATTENTION"},
                                                    {{"PROVISION_ATTENTION", "xformers"}, {"PROVISION_FORCE", "1"}});
        CHECK(handoff.result.exit_code == 0);
        CHECK(handoff.arguments == kCommand);
        CHECK(handoff.env.at("PROVISION_ATTENTION") == "xformers");
        CHECK_THAT(handoff.result.err, Catch::Contains("warning: xformers is forced"));
    }
}

TEST_CASE("vllm: VLLM_ATTENTION_BACKEND the user set is kept when a recipe would write it") {
    e2e::TempDir dir;
    // An older-release recipe that still writes the variable.
    e2e::write_file(dir.file("old-vllm.toml"),
                    "[workloads.vllm.mechanism_env.VLLM_ATTENTION_BACKEND]\nflash2 = \"FLASH_ATTN\"\n"
                    "flex = \"FLEX_ATTENTION\"\n");
    auto options = workload_e2e::options(dir, "vllm", "ampere", with_vllm(dir, "all"));
    options.insert(options.end(), {"--recipe", dir.file("old-vllm.toml")});
    SECTION("unset: the recipe's value") {
        const auto handoff = workload_e2e::hand_off(options, kCommand, {"VLLM_ATTENTION_BACKEND"});
        REQUIRE(handoff.result.exit_code == 0);
        CHECK(handoff.env.at("VLLM_ATTENTION_BACKEND") == "FLASH_ATTN");
    }
    SECTION("set: the user's value reaches vLLM and the env file, and the summary says so") {
        const auto handoff = workload_e2e::hand_off(options, kCommand, {"VLLM_ATTENTION_BACKEND"},
                                                    {{"VLLM_ATTENTION_BACKEND", "FLASHINFER"}});
        REQUIRE(handoff.result.exit_code == 0);
        CHECK(handoff.env.at("VLLM_ATTENTION_BACKEND") == "FLASHINFER");
        CHECK(e2e::source_env_file(dir.file(".env_settings"), {"VLLM_ATTENTION_BACKEND"}).at("VLLM_ATTENTION_BACKEND") ==
              "FLASHINFER");
        CHECK_THAT(handoff.result.err, Catch::Contains("VLLM_ATTENTION_BACKEND=FLASHINFER kept from the environment"));
    }
}

TEST_CASE("vllm with FlashInfer's prebuilt kernels and FA4: vLLM's own order on each family") {
    e2e::TempDir packages;
    const std::vector<std::string> dirs = {
        e2e::site_packages("all"),
        workload_e2e::site_packages(packages, "2026",
                                    {"vllm==0.26.0", "flashinfer_python==0.6.18", "flashinfer_jit_cache==0.6.18+cu130",
                                     "flashinfer_cubin==0.6.18", "nvidia_cutlass_dsl==4.7.1"})};
    auto unset = kNeverSet;
    unset.push_back("PROVISION_VLLM_FLASH_ATTN_VERSION");
    const Expectation flashinfer_row{"blackwell", "flashinfer", {"--attention-backend=FLASHINFER"},
                                     {{"PROVISION_VLLM_ATTENTION_BACKEND", "FLASHINFER"}}, unset};
    workload_e2e::expect_handoff("vllm", dirs, kCommand, flashinfer_row);
    // Consumer Blackwell: FLASH_ATTN first, FA2 (vLLM has no FA4 on 12.x).
    workload_e2e::expect_handoff("vllm", dirs, kCommand, flash("blackwell_consumer", "flash2"));
    workload_e2e::expect_handoff("vllm", dirs, kCommand, flash("hopper", "flash3"));
    workload_e2e::expect_handoff("vllm", dirs, kCommand, flash("ada", "flash2"));
    // Turing: FlashInfer (7.5 and newer), before FlexAttention.
    Expectation turing = flashinfer_row;
    turing.family = "turing";
    workload_e2e::expect_handoff("vllm", dirs, kCommand, turing);
}

TEST_CASE("vllm on datacenter Blackwell without FlashInfer takes its FA4 build, version 4 pinned") {
    e2e::TempDir packages;
    const std::vector<std::string> dirs = {
        e2e::site_packages("all"),
        workload_e2e::site_packages(packages, "fa4", {"vllm==0.26.0", "nvidia_cutlass_dsl==4.7.1"})};
    workload_e2e::expect_handoff(
        "vllm", dirs, kCommand,
        {"blackwell",
         "flash4",
         {"--attention-backend=FLASH_ATTN", "--attention-config.flash_attn_version=4"},
         {{"PROVISION_VLLM_ATTENTION_BACKEND", "FLASH_ATTN"}, {"PROVISION_VLLM_FLASH_ATTN_VERSION", "4"}},
         kNeverSet});
}
