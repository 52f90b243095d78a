// CUDA_VISIBLE_DEVICES through the built binary: for every value measured
// against CUDA on a one-GPU machine, provision selects for the GPUs CUDA
// would give the workload, and says so when that is none.
#include <catch2/catch.hpp>

#include "harness.h"
#include "support/cuda_visible_devices_table.h"
#include "support/reliability_record.h"

TEST_CASE("CUDA_VISIBLE_DEVICES: provision sees the GPUs CUDA gives the workload, for every measured value") {
    e2e::TempDir dir;
    // tests/fixtures/gpus/h100.toml's UUID.
    const auto rows = test_support::cuda_visible_devices_table(
        e2e::source_path("tests/fixtures/cuda_visible_devices.tsv"), "8932f937-d72c-4106-c12f-20bd9faed9f6");
    REQUIRE(rows.size() >= 30);
    std::size_t none = 0;
    for (const auto& row : rows) {
        INFO("CUDA_VISIBLE_DEVICES=[" << (row.value ? *row.value : "(unset)") << "]");
        std::map<std::string, std::string> env;
        if (row.value) env["CUDA_VISIBLE_DEVICES"] = *row.value;
        const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--json",
                                            "--site-packages", e2e::site_packages("torch-only"), "--env-file",
                                            dir.file("env")},
                                           env);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["gpus"].size() == row.cuda_count);
        if (row.cuda_count == 0) {
            ++none;
            CHECK(result.err.find("no GPU") != std::string::npos);
            CHECK(report["selected"]["mechanism"] == "eager");
        } else {
            CHECK(report["selected"]["mechanism"] != "eager");
        }
    }
    CHECK(none > 10);
    reliability::record("input", "CUDA_VISIBLE_DEVICES: 57 values measured against CUDA on an H100 (\"0,0\", \"0a\", "
                        "\"+0\", \"gpu-<uuid>\", \"4294967296\", ...)",
                        "the same GPUs as CUDA for every value; none visible is said in the summary");
}
