// Number formats end to end on simulated machines of every family: the
// report's "formats", PROVISION_DTYPE and PROVISION_FP8 in the env file, the
// user's PROVISION_DTYPE kept or refused, the fp8 gate on an old torch, and
// the dtype flag a workload recipe adds.
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "workload_fixtures.h"
#include "support/reliability_record.h"

using e2e::TempDir;
namespace fs = std::filesystem;

namespace {

// provision on `fixture` with `packages` (a folder of tests/fixtures/site-packages or a path).
e2e::Result run(const TempDir& dir, const std::string& fixture, const std::map<std::string, std::string>& env = {},
                std::vector<std::string> extra = {}, const std::string& packages = e2e::site_packages("all")) {
    std::vector<std::string> args = {"--gpu-fixture", e2e::gpu_fixture(fixture), "--site-packages", packages,
                                     "--env-file", dir.file(".env_settings"), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return e2e::provision(args, env);
}

std::map<std::string, std::string> env_file(const TempDir& dir) {
    return e2e::source_env_file(dir.file(".env_settings"), {"PROVISION_DTYPE", "PROVISION_FP8"});
}

// A site-packages folder holding exactly these NAME-VERSION distributions.
std::string site_packages_with(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& packages) {
    const std::string site = dir.file("site-packages");
    for (const auto& [name, version] : packages) {
        const std::string dist_info = fmt::format("{}/{}-{}.dist-info", site, name, version);
        fs::create_directories(dist_info);
        e2e::write_file(dist_info + "/METADATA",
                        fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    }
    return site;
}

struct Family {
    const char* fixture;
    const char* dtype;    // PROVISION_DTYPE and "recommended"
    const char* fp8;      // PROVISION_FP8
    const char* fp16;     // states in the report
    const char* bf16;
    const char* fp8_state;
    const char* fp4;
};

}  // namespace

TEST_CASE("every GPU family: the formats from the recipes (skipped: simulated), the dtype and PROVISION_FP8",
          "[formats]") {
    const std::vector<Family> families = {
        {"t4", "float16", "0", "skipped", "unsupported", "unsupported", "unsupported"},
        {"v100", "float16", "0", "unverified", "unsupported", "unsupported", "unsupported"},
        {"a100", "bfloat16", "0", "skipped", "skipped", "unsupported", "unsupported"},
        {"l40s", "bfloat16", "1", "skipped", "skipped", "skipped", "unsupported"},
        {"h100", "bfloat16", "1", "skipped", "skipped", "skipped", "unsupported"},
        {"b200", "bfloat16", "1", "skipped", "skipped", "skipped", "unverified"},
        {"rtx5090", "bfloat16", "1", "skipped", "skipped", "skipped", "unverified"},
        {"cpu-only", "float32", "0", "unsupported", "unsupported", "unsupported", "unsupported"},
        {"mixed-h100-t4", "float16", "0", "skipped", "unsupported", "unsupported", "unsupported"},
    };
    for (const auto& family : families) {
        TempDir dir;
        const auto result = run(dir, family.fixture);
        INFO(family.fixture << ": " << result.err);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        const auto& formats = report["formats"];
        CHECK(formats["recommended"] == family.dtype);
        CHECK(formats["fp16"] == family.fp16);
        CHECK(formats["bf16"] == family.bf16);
        CHECK(formats["fp8"] == family.fp8_state);
        CHECK(formats["fp4"] == family.fp4);
        CHECK(formats["fp6"] == family.fp4);
        CHECK(report["env"]["PROVISION_DTYPE"] == family.dtype);
        CHECK(report["env"]["PROVISION_FP8"] == family.fp8);
        const auto env = env_file(dir);
        CHECK(env.at("PROVISION_DTYPE") == family.dtype);
        CHECK(env.at("PROVISION_FP8") == family.fp8);
        CHECK_THAT(result.err, Catch::Contains(fmt::format("Dtype:              {} (", family.dtype)));
    }
    reliability::record("formats", "every GPU family on a fixture (T4, V100, A100, L40S, H100, B200, RTX 5090, CPU, "
                                   "H100 + T4)",
                        "formats from the recipes, skipped (simulated); PROVISION_DTYPE bfloat16 from sm_80, float16 "
                        "on T4/V100 and the mixed pod, float32 on CPU; PROVISION_FP8=1 from sm_89");
}

TEST_CASE("an H100 beside a T4: float16, and --explain names the T4 as what limits bf16 and fp8", "[formats]") {
    TempDir dir;
    const auto result = run(dir, "mixed-h100-t4", {}, {"--explain"});
    REQUIRE(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("bf16: unsupported, limited by GPU 1 (Tesla T4, turing, compute capability "
                                           "7.5): needs compute capability 8.0 or newer"));
    CHECK_THAT(result.err, Catch::Contains("fp8: unsupported, limited by GPU 1 (Tesla T4"));
    CHECK_THAT(result.err, Catch::Contains("fp16: skipped, limited by GPU 0 (NVIDIA H100 80GB HBM3"));
    CHECK_THAT(result.err, Catch::Contains("not bfloat16: bf16 is unsupported on GPU 1 (Tesla T4"));
    // Without --explain the dtype line still says why.
    TempDir plain;
    CHECK_THAT(run(plain, "mixed-h100-t4").err, Catch::Contains("Dtype:              float16 (the first dtype"));
}

TEST_CASE("the user's PROVISION_DTYPE: kept where every GPU runs it, refused with exit 4 where one cannot",
          "[formats]") {
    SECTION("kept, and said so") {
        TempDir dir;
        const auto result = run(dir, "h100", {{"PROVISION_DTYPE", "float16"}});
        REQUIRE(result.exit_code == 0);
        CHECK(e2e::report(result)["formats"]["recommended"] == "bfloat16");
        CHECK(env_file(dir).at("PROVISION_DTYPE") == "float16");
        CHECK_THAT(result.err,
                   Catch::Contains("PROVISION_DTYPE=float16 kept from the environment (the recipe's value: bfloat16)"));
    }
    SECTION("bfloat16 on a T4: refused, nothing written") {
        TempDir dir;
        e2e::write_file(dir.file(".env_settings"), "export OLD='1'\n");
        const auto result = run(dir, "t4", {{"PROVISION_DTYPE", "bfloat16"}});
        CHECK(result.exit_code == 4);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "failed");
        CHECK(e2e::read_file(dir.file(".env_settings")) == "export OLD='1'\n");
        CHECK_THAT(result.err, Catch::Contains("PROVISION_DTYPE=bfloat16 cannot be served: bf16 is unsupported on GPU "
                                               "0: needs compute capability 8.0 or newer (set PROVISION_FORCE=1 to use it anyway)"));
        CHECK_THAT(report["warnings"].dump(), Catch::Contains("PROVISION_DTYPE=bfloat16 cannot be served"));
        reliability::record("formats", "PROVISION_DTYPE=bfloat16 on a GPU without bf16 (T4)",
                            "exit 4, verdict failed, the old env file untouched; the message names the GPU and "
                            "PROVISION_FORCE=1");
    }
    SECTION("bfloat16 on the mixed pod: refused for the T4") {
        TempDir dir;
        CHECK(run(dir, "mixed-h100-t4", {{"PROVISION_DTYPE", "bfloat16"}}).exit_code == 4);
    }
    SECTION("forced: degraded, and the workload gets it") {
        TempDir dir;
        const auto result = run(dir, "t4", {{"PROVISION_DTYPE", "bfloat16"}, {"PROVISION_FORCE", "1"}});
        REQUIRE(result.exit_code == 0);
        CHECK(e2e::report(result)["verdict"] == "degraded");
        CHECK(env_file(dir).at("PROVISION_DTYPE") == "bfloat16");
        CHECK_THAT(result.err, Catch::Contains("forced by PROVISION_FORCE=1"));
    }
    SECTION("an unknown dtype is a usage error naming the valid ones") {
        TempDir dir;
        const auto result = run(dir, "h100", {{"PROVISION_DTYPE", "fp16"}});
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains("PROVISION_DTYPE=fp16: unknown dtype"));
        CHECK_THAT(result.err, Catch::Contains("(valid: bfloat16, float16, float32, auto)"));
        CHECK(e2e::report(result)["error"]["exit_code"] == 2);
        CHECK_FALSE(fs::exists(dir.file(".env_settings")));
    }
    SECTION("auto chooses") {
        TempDir dir;
        REQUIRE(run(dir, "t4", {{"PROVISION_DTYPE", "auto"}}).exit_code == 0);
        CHECK(env_file(dir).at("PROVISION_DTYPE") == "float16");
    }
}

TEST_CASE("fp8 on Ada with a torch older than 2.3: PROVISION_FP8=0 and a note; Hopper is not gated", "[formats]") {
    TempDir dir;
    const std::string old_torch = site_packages_with(dir, {{"torch", "2.2.1"}});
    const auto l40s = run(dir, "l40s", {}, {}, old_torch);
    REQUIRE(l40s.exit_code == 0);
    const auto report = e2e::report(l40s);
    CHECK(report["formats"]["fp8"] == "skipped");  // the hardware is not in question
    CHECK(report["env"]["PROVISION_FP8"] == "0");
    CHECK_THAT(report["warnings"].dump(),
               Catch::Contains("fp8 is off: GPU 0 (NVIDIA L40S, ada, compute capability 8.9) needs torch>=2.3 "
                               "(torch 2.2.1 installed)"));
    const auto h100 = run(dir, "h100", {}, {}, old_torch);
    REQUIRE(h100.exit_code == 0);
    CHECK(e2e::report(h100)["env"]["PROVISION_FP8"] == "1");
}

TEST_CASE("a mechanism recipe's own dtype order wins over [dtypes]", "[formats]") {
    TempDir dir;
    e2e::write_file(dir.file("site.toml"), "[mechanisms.flex]\ndtype_preference = [\"float16\", \"bfloat16\"]\n");
    const auto result = run(dir, "a100", {{"PROVISION_ATTENTION", "flex"}}, {"--recipe", dir.file("site.toml")});
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["selected"]["mechanism"] == "flex");
    CHECK(report["formats"]["recommended"] == "float16");
    CHECK_THAT(result.err, Catch::Contains("the flex mechanism's recipe order (float16, bfloat16)"));
    // The built-in recipes keep bf16 first for flex too.
    TempDir plain;
    CHECK(e2e::report(run(plain, "a100", {{"PROVISION_ATTENTION", "flex"}}))["formats"]["recommended"] == "bfloat16");
}

TEST_CASE("SGLang on a GPU without bf16 gets --dtype=half; elsewhere, or with a --dtype of the user's, nothing",
          "[formats]") {
    TempDir dir;
    const std::string site = site_packages_with(dir, {{"torch", "2.11.0"}, {"sglang", "0.5.5"}});
    auto appended = [&](const std::string& family, const std::vector<std::string>& command,
                        const std::map<std::string, std::string>& environment = {}) {
        const auto handoff = workload_e2e::hand_off(workload_e2e::options(dir, "sglang", family, {site}), command,
                                                    {"PROVISION_DTYPE"}, environment);
        INFO(handoff.result.err);
        REQUIRE(handoff.result.exit_code == 0);
        return std::vector<std::string>(handoff.arguments.begin() + static_cast<long>(command.size()),
                                        handoff.arguments.end());
    };
    const std::vector<std::string> command{"-m", "sglang.launch_server"};
    CHECK(appended("turing", command) == std::vector<std::string>{"--attention-backend=torch_native", "--dtype=half"});
    CHECK(appended("turing", {"-m", "sglang.launch_server", "--dtype", "bfloat16"}) ==
          std::vector<std::string>{"--attention-backend=torch_native"});
    CHECK(appended("blackwell", command) == std::vector<std::string>{"--attention-backend=torch_native"});
    // Asked for on a GPU that has bf16, float16 reaches SGLang too.
    CHECK(appended("blackwell", command, {{"PROVISION_DTYPE", "float16"}}) ==
          std::vector<std::string>{"--attention-backend=torch_native", "--dtype=half"});
}

namespace {

// provision on the fake NVML and libcuda acting out `fixture`, with the
// test-only simulated worker: validation runs as on a real driver, each
// check passing unless PROVISION_TEST_FAULT plants a fault in it.
e2e::Result run_validated(const TempDir& dir, const std::string& fixture,
                          std::map<std::string, std::string> env = {}) {
    env.insert({{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                {"PROVISION_FAKE_GPU_FIXTURE", e2e::gpu_fixture(fixture)},
                {"PROVISION_TEST_WORKER", "simulate"},
                {"PROVISION_DETECT_TIMEOUT", "10"}});
    return e2e::provision({"--site-packages", e2e::site_packages("all"), "--env-file", dir.file(".env_settings"),
                           "--json", "--validate-timeout", "20"},
                          env);
}

}  // namespace

TEST_CASE("validated on the (fake) GPU: the formats pass; a failed fp8 check turns fp8 off", "[formats][faults]") {
    SECTION("every check passes") {
        TempDir dir;
        const auto result = run_validated(dir, "h100");
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["formats"]["fp8"] == "passed");
        CHECK(report["formats"]["bf16"] == "passed");
        CHECK(report["formats"]["fp16"] == "passed");
        CHECK(report["formats"]["recommended"] == "bfloat16");
        CHECK(env_file(dir).at("PROVISION_FP8") == "1");
    }
    SECTION("gemm.fp8 returns a wrong result") {
        TempDir dir;
        const auto result = run_validated(dir, "h100", {{"PROVISION_TEST_FAULT", "gemm.fp8=wrong-result"}});
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["verdict"] == "degraded");
        CHECK(report["formats"]["fp8"] == "failed");
        CHECK(report["formats"]["bf16"] == "passed");
        CHECK(report["formats"]["recommended"] == "bfloat16");
        CHECK(report["env"]["PROVISION_FP8"] == "0");
        CHECK(env_file(dir).at("PROVISION_FP8") == "0");
        bool listed = false;
        for (const auto& check : report["validation"]["checks"])
            listed = listed || (check["name"] == "gemm.fp8" && check["status"] == "failed");
        CHECK(listed);
        reliability::record("formats", "gemm.fp8 returns a wrong result (fault injected, H100)",
                            "exit 0, verdict degraded; formats.fp8 failed, PROVISION_FP8=0; bf16 still passed and "
                            "recommended");
    }
    SECTION("attention.bf16 fails: float16, and a PROVISION_DTYPE=bfloat16 is refused with exit 5") {
        TempDir dir;
        const std::map<std::string, std::string> fault{{"PROVISION_TEST_FAULT", "attention.bf16=wrong-result"}};
        const auto result = run_validated(dir, "h100", fault);
        REQUIRE(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["formats"]["bf16"] == "failed");
        CHECK(report["formats"]["recommended"] == "float16");
        CHECK(env_file(dir).at("PROVISION_DTYPE") == "float16");
        auto asked = fault;
        asked["PROVISION_DTYPE"] = "bfloat16";
        TempDir refused;
        const auto refusal = run_validated(refused, "h100", asked);
        CHECK(refusal.exit_code == 5);
        CHECK_THAT(refusal.err, Catch::Contains("bf16 failed on GPU 0: check attention.bf16 failed"));
        CHECK_FALSE(fs::exists(refused.file(".env_settings")));
    }
}
