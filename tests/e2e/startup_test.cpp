// What a start costs and what --validate=full judges, end to end: the built
// binary on the fake NVML and libcuda (which log every cuInit), and user
// recipes with [throughput] tables.
#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "harness.h"

using e2e::TempDir;

namespace {

// provision --check --no-validate --json on the fake drivers acting out
// `fixture`; returns the result, and the cuInit calls in `init_count`.
e2e::Result check_on_fake_driver(const TempDir& dir, const std::string& fixture,
                                 std::map<std::string, std::string> env, std::size_t& init_count) {
    static int runs = 0;
    const std::string log = dir.file("cuinit-" + std::to_string(++runs) + ".log");
    env.insert({{"PROVISION_NVML_LIBRARY", FAKE_NVML_LIBRARY},
                {"PROVISION_CUDA_LIBRARY", FAKE_CUDA_LIBRARY},
                {"PROVISION_FAKE_GPU_FIXTURE", e2e::gpu_fixture(fixture)},
                {"PROVISION_FAKE_CUDA_INIT_LOG", log},
                {"PROVISION_DETECT_TIMEOUT", "20"}});
    const auto result = e2e::provision(
        {"--check", "--no-validate", "--json", "--site-packages", e2e::site_packages("all")}, env);
    const std::string text = std::filesystem::exists(log) ? e2e::read_file(log) : "";
    init_count = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    return result;
}

}  // namespace

TEST_CASE("provision --check leaves libcuda unstarted when NVML answers for it", "[startup]") {
    TempDir dir;
    std::size_t inits = 99;
    const auto result = check_on_fake_driver(dir, "h100", {}, inits);
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    REQUIRE(report["gpus"].size() == 1);
    CHECK(report["gpus"][0]["compute_capability"] == "9.0");
    CHECK(report["driver"]["cuda"] == "13.0");
    CHECK(report["selected"]["mechanism"] == "flash3");
    CHECK(inits == 0);
}

TEST_CASE("provision --check asks libcuda for CUDA's order on a machine of two models", "[startup]") {
    TempDir dir;
    std::size_t inits = 0;
    const auto result = check_on_fake_driver(dir, "mixed-h100-a100", {}, inits);
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == 0);
    CHECK(e2e::report(result)["gpus"].size() == 2);
    CHECK(inits == 1);

    std::size_t by_bus = 99;
    const auto ordered = check_on_fake_driver(dir, "mixed-h100-a100", {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}, by_bus);
    CHECK(ordered.exit_code == 0);
    CHECK(e2e::report(ordered)["gpus"].size() == 2);
    CHECK(by_bus == 0);
}

TEST_CASE("a user recipe's [throughput] table is checked like the rest of the recipes", "[startup][throughput]") {
    TempDir dir;
    e2e::write_file(dir.file("fast.toml"),
                    "[throughput.models.\"H100 SXM\"]\ntflops = { \"attention.bf16.wgmmma\" = 900 }\n");
    const auto bad = e2e::provision({"--check", "--validate=full", "--gpu-fixture", e2e::gpu_fixture("h100"),
                                     "--recipe", dir.file("fast.toml")});
    CHECK(bad.exit_code == 3);
    CHECK_THAT(bad.err, Catch::Contains("fast.toml:2:") && Catch::Contains("unknown check 'attention.bf16.wgmmma'") &&
                            Catch::Contains("did you mean 'attention.bf16.wgmma'"));

    e2e::write_file(dir.file("good.toml"), "[throughput]\ndegraded_below = 0.5\n");
    const auto good = e2e::provision({"--check", "--validate=full", "--json", "--gpu-fixture",
                                      e2e::gpu_fixture("h100"), "--recipe", dir.file("good.toml")});
    INFO("stderr: " << good.err);
    CHECK(good.exit_code == 0);
    const auto report = e2e::report(good);
    CHECK(report["validation"]["status"] == "skipped");  // a simulated GPU measures nothing to judge
    CHECK(report["verdict"] == "ok");
}
