// The diffusers recipe end to end: DIFFUSERS_ATTN_BACKEND on every GPU
// family, diffusers' own version floors, nothing added to the command line,
// and the overrides.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

using workload_e2e::Expectation;

namespace {

const std::vector<std::string> kCommand{"generate.py", "--prompt", "a lighthouse at dusk"};

Expectation gpu(const std::string& family, const std::string& mechanism, const std::string& backend) {
    return {family,
            mechanism,
            {},
            {{"DIFFUSERS_ATTN_BACKEND", backend}, {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}},
            {}};
}

Expectation cpu() {
    return {"cpu", "eager", {}, {{"DIFFUSERS_ATTN_BACKEND", "_native_math"}}, {"PYTORCH_CUDA_ALLOC_CONF"}};
}

std::vector<std::string> packages(const std::string& name) { return {e2e::site_packages(name)}; }

}  // namespace

TEST_CASE("diffusers, all packages: sage, _flash_3, flash, xformers by family; _native_math below Volta") {
    for (const auto& row : {gpu("blackwell", "sage", "sage"), gpu("hopper", "flash3", "_flash_3"),
                            gpu("ada", "flash2", "flash"), gpu("ampere", "flash2", "flash"),
                            gpu("turing", "xformers", "xformers"), gpu("volta", "xformers", "xformers"),
                            gpu("pascal", "eager", "_native_math"), cpu()})
        workload_e2e::expect_handoff("diffusers", packages("all"), kCommand, row);
}

TEST_CASE("diffusers, torch only: native from Volta up, _native_math below") {
    for (const auto& row : {gpu("blackwell", "sdpa", "native"), gpu("hopper", "sdpa", "native"),
                            gpu("ada", "sdpa", "native"), gpu("ampere", "sdpa", "native"),
                            gpu("turing", "sdpa", "native"), gpu("volta", "sdpa", "native"),
                            gpu("pascal", "eager", "_native_math"), cpu()})
        workload_e2e::expect_handoff("diffusers", packages("torch-only"), kCommand, row);
}

TEST_CASE("diffusers' own version floors reject what the generic workload accepts") {
    SECTION("flash-attn 2.5.0 is below diffusers' 2.6.3") {
        workload_e2e::expect_handoff("diffusers", packages("flash2-old"), kCommand, gpu("ampere", "sdpa", "native"));
        e2e::TempDir dir;
        const auto generic = workload_e2e::hand_off(
            workload_e2e::options(dir, "generic", "ampere", packages("flash2-old")), kCommand, {"PROVISION_ATTENTION"});
        CHECK(generic.env.at("PROVISION_ATTENTION") == "flash2");
    }
    SECTION("xformers 0.0.28.post1 is below diffusers' 0.0.29") {
        workload_e2e::expect_handoff("diffusers", packages("egg-info"), kCommand, gpu("turing", "sdpa", "native"));
        e2e::TempDir dir;
        const auto generic = workload_e2e::hand_off(
            workload_e2e::options(dir, "generic", "turing", packages("egg-info")), kCommand, {"PROVISION_ATTENTION"});
        CHECK(generic.env.at("PROVISION_ATTENTION") == "xformers");
    }
}

TEST_CASE("diffusers: flash_attn_3 missing on Hopper gives flash") {
    workload_e2e::expect_handoff("diffusers", packages("no-flash3"), kCommand, gpu("hopper", "flash2", "flash"));
}

TEST_CASE("diffusers: the command line is handed over untouched") {
    e2e::TempDir dir;
    const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "diffusers", "ada", packages("all")),
                                                kCommand, {});
    CHECK(handoff.result.exit_code == 0);
    CHECK(handoff.arguments == kCommand);
}

TEST_CASE("diffusers: PROVISION_ATTENTION picks the backend") {
    SECTION("flex on Ada") {
        workload_e2e::expect_handoff("diffusers", packages("all"), kCommand, gpu("ada", "flex", "flex"),
                                     {{"PROVISION_ATTENTION", "flex_attention"}});
    }
    SECTION("native on Hopper") {
        workload_e2e::expect_handoff("diffusers", packages("all"), kCommand, gpu("hopper", "sdpa", "native"),
                                     {{"PROVISION_ATTENTION", "sdpa"}});
    }
    SECTION("sage on Ampere") {
        workload_e2e::expect_handoff("diffusers", packages("all"), kCommand, gpu("ampere", "sage", "sage"),
                                     {{"PROVISION_ATTENTION", "sageattention"}});
    }
    SECTION("_flash_3 on an Ada GPU is refused") {
        e2e::TempDir dir;
        const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "diffusers", "ada", packages("all")),
                                                    kCommand, {}, {{"PROVISION_ATTENTION", "flash3"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK(handoff.arguments.empty());
    }
}

TEST_CASE("diffusers: DIFFUSERS_ATTN_BACKEND the user set is kept, and the summary says so") {
    e2e::TempDir dir;
    auto args = workload_e2e::options(dir, "diffusers", "hopper", packages("all"));
    args.push_back("--explain");
    const auto handoff = workload_e2e::hand_off(args, kCommand, {"DIFFUSERS_ATTN_BACKEND", "PROVISION_ATTENTION"},
                                                {{"DIFFUSERS_ATTN_BACKEND", "_native_cudnn"}});
    REQUIRE(handoff.result.exit_code == 0);
    CHECK(handoff.env.at("DIFFUSERS_ATTN_BACKEND") == "_native_cudnn");
    CHECK(handoff.env.at("PROVISION_ATTENTION") == "flash3");
    CHECK(e2e::source_env_file(dir.file(".env_settings"), {"DIFFUSERS_ATTN_BACKEND"}).at("DIFFUSERS_ATTN_BACKEND") ==
          "_native_cudnn");
    CHECK_THAT(handoff.result.err, Catch::Contains("DIFFUSERS_ATTN_BACKEND=_native_cudnn kept from the environment"));
    CHECK_THAT(handoff.result.err, Catch::Contains("_flash_3"));
}
