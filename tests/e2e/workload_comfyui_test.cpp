// The comfyui recipe end to end: the flags appended to `python main.py`,
// COMFYUI_ATTENTION_MECHANISM and the allocator setting on every GPU family,
// the user's own flags, and the overrides.
#include <catch2/catch.hpp>

#include "harness.h"
#include "workload_fixtures.h"

using workload_e2e::Expectation;

namespace {

const std::vector<std::string> kCommand{"main.py", "--listen"};
const std::string kAlloc = "expandable_segments:True";
const std::vector<std::string> kFlash{"--use-flash-attention", "--disable-xformers"};
const std::vector<std::string> kSage{"--use-sage-attention"};
const std::vector<std::string> kSdpa{"--use-pytorch-cross-attention"};
const std::vector<std::string> kEager{"--use-split-cross-attention", "--disable-xformers"};

Expectation gpu(const std::string& family, const std::string& mechanism, const std::vector<std::string>& flags) {
    return {family, mechanism, flags,
            {{"COMFYUI_ATTENTION_MECHANISM", mechanism}, {"PYTORCH_CUDA_ALLOC_CONF", kAlloc}}, {}};
}

Expectation cpu() {
    return {"cpu", "eager", kEager, {{"COMFYUI_ATTENTION_MECHANISM", "eager"}}, {"PYTORCH_CUDA_ALLOC_CONF"}};
}

std::vector<std::string> all() { return {e2e::site_packages("all")}; }
std::vector<std::string> torch_only() { return {e2e::site_packages("torch-only")}; }

}  // namespace

TEST_CASE("comfyui, all packages: sage on Blackwell, FlashAttention on Hopper/Ada/Ampere, xformers on Turing/Volta") {
    for (const auto& row : {gpu("blackwell", "sage", kSage), gpu("hopper", "flash2", kFlash),
                            gpu("ada", "flash2", kFlash), gpu("ampere", "flash2", kFlash),
                            gpu("turing", "xformers", {}), gpu("volta", "xformers", {}),
                            gpu("pascal", "eager", kEager), cpu()})
        workload_e2e::expect_handoff("comfyui", all(), kCommand, row);
}

TEST_CASE("comfyui, torch only: PyTorch attention from Volta up, split attention below") {
    for (const auto& row : {gpu("blackwell", "sdpa", kSdpa), gpu("hopper", "sdpa", kSdpa), gpu("ada", "sdpa", kSdpa),
                            gpu("ampere", "sdpa", kSdpa), gpu("turing", "sdpa", kSdpa), gpu("volta", "sdpa", kSdpa),
                            gpu("pascal", "eager", kEager), cpu()})
        workload_e2e::expect_handoff("comfyui", torch_only(), kCommand, row);
}

TEST_CASE("comfyui never picks flash3: ComfyUI's FlashAttention path is flash-attn's, even on Hopper") {
    e2e::TempDir dir;
    const auto result =
        e2e::provision(workload_e2e::joined(workload_e2e::options(dir, "comfyui", "hopper", all()), {"--json"}));
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flash2");
    for (const auto& candidate : report["candidates"]) CHECK(candidate["mechanism"] != "flash3");
}

TEST_CASE("comfyui: attention flags the user already gave win, and nothing is added twice") {
    SECTION("the user's own attention flag stops provision adding one") {
        for (const std::string flag : {"--use-sage-attention", "--use-pytorch-cross-attention",
                                       "--use-quad-cross-attention", "--use-flash-attention"}) {
            INFO(flag);
            e2e::TempDir dir;
            const std::vector<std::string> command{"main.py", flag, "--listen"};
            const auto handoff =
                workload_e2e::hand_off(workload_e2e::options(dir, "comfyui", "ada", all()), command, {});
            CHECK(handoff.result.exit_code == 0);
            CHECK(handoff.arguments == command);
        }
    }
    SECTION("--disable-xformers given: only --use-flash-attention is added") {
        e2e::TempDir dir;
        const std::vector<std::string> command{"main.py", "--disable-xformers", "--listen"};
        const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "comfyui", "ada", all()), command, {});
        CHECK(handoff.result.exit_code == 0);
        CHECK(handoff.arguments == workload_e2e::joined(command, {"--use-flash-attention"}));
    }
}

TEST_CASE("comfyui: COMFYUI_ATTENTION_MECHANISM and PROVISION_ATTENTION choose the mechanism") {
    SECTION("the images' variable picks sage on Ada") {
        workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("ada", "sage", kSage),
                                     {{"COMFYUI_ATTENTION_MECHANISM", "sage"}});
    }
    SECTION("xformers on Hopper: no flag, ComfyUI's default") {
        workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("hopper", "xformers", {}),
                                     {{"COMFYUI_ATTENTION_MECHANISM", "xformers"}});
    }
    SECTION("flash3, as those images allow: ComfyUI's FlashAttention flags") {
        workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("hopper", "flash3", kFlash),
                                     {{"COMFYUI_ATTENTION_MECHANISM", "flash3"}});
    }
    SECTION("flash3 without the flash-attn package ComfyUI imports: refused") {
        e2e::TempDir dir;
        const auto packages = workload_e2e::site_packages(dir, "fa3-only", {"torch==2.11.0", "flash_attn_3==3.0.0b1"});
        const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "comfyui", "hopper", {packages}),
                                                    kCommand, {}, {{"COMFYUI_ATTENTION_MECHANISM", "flash3"}});
        CHECK(handoff.result.exit_code == 4);
        CHECK_THAT(handoff.result.err, Catch::Contains("flash-attn"));
        CHECK(handoff.arguments.empty());
    }
    SECTION("auto lets provision choose") {
        workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("ada", "flash2", kFlash),
                                     {{"COMFYUI_ATTENTION_MECHANISM", "auto"}});
    }
    SECTION("PROVISION_ATTENTION is read first") {
        workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("ampere", "sdpa", kSdpa),
                                     {{"PROVISION_ATTENTION", "pytorch"}, {"COMFYUI_ATTENTION_MECHANISM", "sage"}});
    }
    SECTION("the JSON report names the variable that chose") {
        e2e::TempDir dir;
        auto args = workload_e2e::options(dir, "comfyui", "ada", all());
        args.push_back("--json");
        const auto result = e2e::provision(args, {{"COMFYUI_ATTENTION_MECHANISM", "sage"}});
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["selected"]["source"] == "override");
        CHECK_THAT(report["selected"]["reason"].get<std::string>(),
                   Catch::Contains("COMFYUI_ATTENTION_MECHANISM=sage"));
    }
}

TEST_CASE("comfyui: PROVISION_ATTENTION=auto leaves the choice to COMFYUI_ATTENTION_MECHANISM") {
    workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("ada", "sage", kSage),
                                 {{"PROVISION_ATTENTION", "auto"}, {"COMFYUI_ATTENTION_MECHANISM", "sage"}});
    workload_e2e::expect_handoff("comfyui", all(), kCommand, gpu("ada", "flash2", kFlash),
                                 {{"PROVISION_ATTENTION", "auto"}, {"COMFYUI_ATTENTION_MECHANISM", "auto"}});
}

TEST_CASE("comfyui: FlexAttention, which ComfyUI has no option for, is refused") {
    e2e::TempDir dir;
    const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "comfyui", "ada", all()), kCommand, {},
                                                {{"COMFYUI_ATTENTION_MECHANISM", "flex"}});
    CHECK(handoff.result.exit_code == 4);
    CHECK(handoff.arguments.empty());
    CHECK_THAT(handoff.result.err, Catch::Contains("the 'comfyui' workload cannot use flex"));
}

TEST_CASE("comfyui: the user's allocator setting is kept and noted") {
    e2e::TempDir dir;
    const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "comfyui", "ampere", all()), kCommand,
                                                {"PYTORCH_CUDA_ALLOC_CONF"},
                                                {{"PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync"}});
    REQUIRE(handoff.result.exit_code == 0);
    CHECK(handoff.env.at("PYTORCH_CUDA_ALLOC_CONF") == "backend:cudaMallocAsync");
    CHECK(e2e::source_env_file(dir.file(".env_settings"), {"PYTORCH_CUDA_ALLOC_CONF"}).at("PYTORCH_CUDA_ALLOC_CONF") ==
          "backend:cudaMallocAsync");
    CHECK_THAT(handoff.result.err,
               Catch::Contains("PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync kept from the environment"));
}
