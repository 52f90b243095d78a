// The [throughput] recipe table and the verdict --validate=full draws from it.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "recipe/recipe_loader.h"
#include "test_support.h"
#include "validate/throughput_health.h"

using namespace provision;
using test_support::TempDir;
using test_support::write_file;

namespace {

const std::string kBuiltin = test_support::source_path("recipes");

using test_support::malformed_recipe_message;

// The built-in recipes plus one user file holding `text`.
std::string user_recipe_error(const std::string& text) {
    TempDir dir;
    write_file(dir.file("user.toml"), text);
    return malformed_recipe_message({kBuiltin, dir.file("user.toml")});
}

ThroughputTable h100_table() {
    ThroughputTable table;
    table.degraded_below = 0.6;
    table.models["H100 SXM"] = {"H100 SXM", {"NVIDIA H100 80GB HBM3"}, {{"attention.bf16.wgmma", 600}, {"gemm.tf32", 170}}, ""};
    table.models["A100 SXM"] = {"A100 SXM", {"NVIDIA A100-SXM4-80GB"}, {}, ""};
    return table;
}

Gpu gpu(int index, const std::string& name) {
    Gpu g;
    g.index = index;
    g.name = name;
    return g;
}

CheckOutcome check(int gpu, const std::string& name, double tflops, CheckStatus status = CheckStatus::passed) {
    CheckOutcome record;
    record.gpu = gpu;
    record.name = name;
    record.status = status;
    record.tflops = tflops;
    return record;
}

}  // namespace

TEST_CASE("the built-in throughput table holds the measured H100 and marks others unmeasured", "[throughput]") {
    const RecipeSet recipes = load_recipes({kBuiltin});
    CHECK(recipes.throughput.degraded_below == Approx(0.6));
    const ThroughputModel* h100 = recipes.throughput.find("NVIDIA H100 80GB HBM3");
    REQUIRE(h100 != nullptr);
    for (const char* name : {"attention.bf16.wgmma", "attention.bf16", "attention.fp16", "gemm.tf32"}) {
        INFO(name);
        REQUIRE(h100->tflops.count(name) == 1);
        CHECK(h100->tflops.at(name) > 100);
        CHECK(recipes.checks.count(name) == 1);
    }
    CHECK_FALSE(h100->measured.empty());
    CHECK(recipes.throughput.find("  nvidia h100 80gb hbm3 ") == h100);  // case and blanks ignored
    const ThroughputModel* a100 = recipes.throughput.find("NVIDIA A100-SXM4-80GB");
    REQUIRE(a100 != nullptr);
    CHECK(a100->tflops.empty());
    CHECK(recipes.throughput.find("NVIDIA H100") == nullptr);  // whole names only
}

TEST_CASE("a user recipe adds and changes throughput figures", "[throughput]") {
    TempDir dir;
    write_file(dir.file("user.toml"), R"(
[throughput]
degraded_below = 0.5
[throughput.models."A100 SXM"]
tflops = { "attention.bf16" = 150 }
[throughput.models."Lab card"]
names = ["NVIDIA Lab Card"]
tflops = { "gemm.tf32" = 42.5 }
)");
    const RecipeSet recipes = load_recipes({kBuiltin, dir.file("user.toml")});
    CHECK(recipes.throughput.degraded_below == Approx(0.5));
    const ThroughputModel* a100 = recipes.throughput.find("NVIDIA A100-SXM4-40GB");  // names kept from the built-in
    REQUIRE(a100 != nullptr);
    CHECK(a100->tflops.at("attention.bf16") == Approx(150));
    REQUIRE(recipes.throughput.find("nvidia lab card") != nullptr);
    CHECK(recipes.throughput.find("nvidia lab card")->tflops.at("gemm.tf32") == Approx(42.5));
}

TEST_CASE("malformed throughput tables are rejected with file:line:column", "[throughput]") {
    CHECK_THAT(user_recipe_error("[throughput.models.X]\nnames = [\"G\"]\ntflops = { \"attention.bf17\" = 1 }\n"),
               Catch::Contains("user.toml:3:") && Catch::Contains("unknown check 'attention.bf17' in [throughput]") &&
                   Catch::Contains("did you mean 'attention.bf16'?"));
    CHECK_THAT(user_recipe_error("[throughput.models.X]\nnames = [\"G\"]\ntflops = { \"gemm.tf32\" = -3 }\n"),
               Catch::Contains("user.toml:3:") && Catch::Contains("must be a positive number"));
    CHECK_THAT(user_recipe_error("[throughput.models.X]\nnames = [\"G\"]\ntflops = { \"gemm.tf32\" = \"fast\" }\n"),
               Catch::Contains("must be a positive number"));
    CHECK_THAT(user_recipe_error("[throughput.models.X]\ntflops = { \"gemm.tf32\" = 3 }\n"),
               Catch::Contains("names no GPU"));
    CHECK_THAT(user_recipe_error("[throughput.models.X]\nnames = [\"G\"]\nexpected = 3\n"),
               Catch::Contains("user.toml:3:") && Catch::Contains("expected"));
    CHECK_THAT(user_recipe_error("[throughput]\ndegraded_below = 1.5\n"), Catch::Contains("at most 1"));
    CHECK_THAT(user_recipe_error("[throughput]\ndegraded_below = 0\n"), Catch::Contains("positive number"));
    CHECK_THAT(user_recipe_error("[throughput]\nmodel = {}\n"), Catch::Contains("model"));
}

TEST_CASE("compare_throughput judges each measured check against its model's figure", "[throughput]") {
    const ThroughputTable table = h100_table();
    const std::vector<Gpu> gpus = {gpu(0, "NVIDIA H100 80GB HBM3"), gpu(1, "NVIDIA H100 80GB HBM3")};

    SECTION("at or near the figure: not degraded, and the figures are there") {
        const auto figures = compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 590), check(0, "gemm.tf32", 175)}, table);
        REQUIRE(figures.size() == 2);
        CHECK_FALSE(figures[0].degraded);
        CHECK(figures[0].measured == Approx(590));
        CHECK(figures[0].expected == Approx(600));
        CHECK_FALSE(figures[1].degraded);
    }
    SECTION("well below: degraded, with measured and expected in the words") {
        const auto figures =
            compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 590), check(1, "attention.bf16.wgmma", 250)}, table);
        REQUIRE(figures.size() == 2);
        CHECK_FALSE(figures[0].degraded);
        CHECK(figures[1].degraded);
        CHECK(figures[1].gpu == 1);
        CHECK(figures[1].words ==
              "GPU 1 (NVIDIA H100 80GB HBM3): attention.bf16.wgmma ran at 250 TFLOP/s, 42 % of the 600 TFLOP/s "
              "expected for H100 SXM (below 60 %): the GPU is shared with other work, throttled or faulty");
    }
    SECTION("just under the fraction is degraded, at it is not") {
        CHECK(compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 359.9)}, table).at(0).degraded);
        CHECK_FALSE(compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 360)}, table).at(0).degraded);
    }
    SECTION("a check without a figure gets one note per GPU, never a verdict") {
        const auto figures =
            compare_throughput(gpus, {check(0, "attention.fp16", 100), check(0, "attention.bf16", 100)}, table);
        REQUIRE(figures.size() == 1);
        CHECK_FALSE(figures[0].degraded);
        CHECK(figures[0].expected == 0);
        CHECK(figures[0].words ==
              "GPU 0 (NVIDIA H100 80GB HBM3): no expected figure for some checks of H100 SXM in the recipes' "
              "[throughput] table, so its throughput was not judged; measured attention.fp16 100 TFLOP/s, "
              "attention.bf16 100 TFLOP/s");
    }
    SECTION("an unmeasured or unknown model is noted, not judged") {
        const auto figures = compare_throughput({gpu(0, "NVIDIA A100-SXM4-80GB"), gpu(1, "NVIDIA Lab Card")},
                                                {check(0, "gemm.tf32", 10), check(1, "gemm.tf32", 10)}, table);
        REQUIRE(figures.size() == 2);
        for (const auto& figure : figures) {
            CHECK_FALSE(figure.degraded);
            CHECK_THAT(figure.words, Catch::Contains("no expected figure for this model"));
        }
    }
    SECTION("quick validation, failed checks and checks of other GPUs are left alone") {
        CHECK(compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 0)}, table).empty());
        CHECK(compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 10, CheckStatus::failed)}, table).empty());
        CHECK(compare_throughput(gpus, {check(0, "attention.bf16.wgmma", 10, CheckStatus::timeout)}, table).empty());
        CHECK(compare_throughput({gpus[0]}, {check(3, "attention.bf16.wgmma", 10)}, table).empty());
    }
}
