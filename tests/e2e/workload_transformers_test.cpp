// The transformers recipe end to end: PROVISION_ATTN_IMPLEMENTATION holds
// the exact attn_implementation value on every GPU family, nothing is added
// to the command line, and the overrides are honoured.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

using workload_e2e::Expectation;

namespace {

const std::vector<std::string> kCommand{"train.py", "--model", "Qwen/Qwen3-0.6B"};

Expectation gpu(const std::string& family, const std::string& mechanism, const std::string& implementation) {
    return {family,
            mechanism,
            {},
            {{"PROVISION_ATTN_IMPLEMENTATION", implementation}, {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}},
            {}};
}

Expectation cpu() {
    return {"cpu", "eager", {}, {{"PROVISION_ATTN_IMPLEMENTATION", "eager"}}, {"PYTORCH_CUDA_ALLOC_CONF"}};
}

std::vector<std::string> all() { return {e2e::site_packages("all")}; }

}  // namespace

TEST_CASE("transformers, all packages: flash_attention_3 on Hopper, flash_attention_2 on Ada/Ampere, sdpa elsewhere") {
    // flash-attn's Blackwell support depends on the build (mechanisms.toml):
    // Blackwell gets sdpa until a user recipe widens flash2.
    for (const auto& row : {gpu("blackwell", "sdpa", "sdpa"), gpu("hopper", "flash3", "flash_attention_3"),
                            gpu("ada", "flash2", "flash_attention_2"), gpu("ampere", "flash2", "flash_attention_2"),
                            gpu("turing", "sdpa", "sdpa"), gpu("volta", "sdpa", "sdpa"),
                            gpu("pascal", "eager", "eager"), cpu()})
        workload_e2e::expect_handoff("transformers", all(), kCommand, row);
}

TEST_CASE("transformers, torch only: sdpa from Volta up, eager below") {
    for (const auto& row : {gpu("blackwell", "sdpa", "sdpa"), gpu("hopper", "sdpa", "sdpa"), gpu("ada", "sdpa", "sdpa"),
                            gpu("ampere", "sdpa", "sdpa"), gpu("turing", "sdpa", "sdpa"), gpu("volta", "sdpa", "sdpa"),
                            gpu("pascal", "eager", "eager"), cpu()})
        workload_e2e::expect_handoff("transformers", {e2e::site_packages("torch-only")}, kCommand, row);
}

TEST_CASE("transformers: flash_attn_3 missing on Hopper gives flash_attention_2") {
    workload_e2e::expect_handoff("transformers", {e2e::site_packages("no-flash3")}, kCommand,
                                 gpu("hopper", "flash2", "flash_attention_2"));
}

TEST_CASE("transformers: the user's command line is handed over untouched") {
    e2e::TempDir dir;
    const std::vector<std::string> command{"train.py", "--attn_implementation", "eager", "--bf16"};
    const auto handoff =
        workload_e2e::hand_off(workload_e2e::options(dir, "transformers", "hopper", all()), command, {});
    CHECK(handoff.result.exit_code == 0);
    CHECK(handoff.arguments == command);
}

TEST_CASE("transformers: PROVISION_ATTENTION picks the implementation") {
    SECTION("flex_attention on Ampere") {
        workload_e2e::expect_handoff("transformers", all(), kCommand, gpu("ampere", "flex", "flex_attention"),
                                     {{"PROVISION_ATTENTION", "flex_attention"}});
    }
    SECTION("transformers' own name for FlashAttention-2 on Hopper") {
        workload_e2e::expect_handoff("transformers", all(), kCommand, gpu("hopper", "flash2", "flash_attention_2"),
                                     {{"PROVISION_ATTENTION", "flash_attention_2"}});
    }
    SECTION("eager anywhere") {
        workload_e2e::expect_handoff("transformers", all(), kCommand, gpu("ada", "eager", "eager"),
                                     {{"PROVISION_ATTENTION", "eager"}});
    }
    SECTION("flash_attention_3 on an Ampere GPU is refused, and no env file is written") {
        e2e::TempDir dir;
        const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "transformers", "ampere", all()),
                                                    kCommand, {}, {{"PROVISION_ATTENTION", "flash_attention_3"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
        CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
    }
}
