#include <catch2/catch.hpp>

#include "workload_env/env_settings.h"
#include "workload_env/user_values.h"

using namespace provision;

namespace {

Inventory one_gpu() {
    Inventory inventory;
    inventory.source = InventorySource::fixture;
    inventory.driver = {true, "580.159.04", "13.0"};
    Gpu gpu;
    gpu.name = "A100";
    gpu.compute_capability = {8, 0};
    gpu.architecture = "ampere";
    inventory.gpus.push_back(gpu);
    return inventory;
}

WorkloadSpec workload() {
    WorkloadSpec spec;
    spec.name = "images";
    spec.env = {{"HF_HUB_ENABLE_HF_TRANSFER", "1"}};
    spec.gpu_env = {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
    spec.override_variables = {"IMAGES_ATTENTION"};
    spec.mechanism_env["IMAGES_ATTENTION"] = {{"flash2", "flash2"}, {"sdpa", "sdpa"}};
    spec.mechanism_env["IMAGES_BACKEND"] = {{"flash2", "flash"}, {"*", "native"}};
    spec.mechanism_env["PROVISION_IMAGES_BACKEND"] = {{"flash2", "flash"}};
    return spec;
}

RecipeSet tf32_recipes() {
    RecipeSet recipes;
    FeatureSpec tf32;
    tf32.name = "tf32";
    tf32.env_enabled = {{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}};
    tf32.env_disabled = {{"NVIDIA_TF32_OVERRIDE", "0"}};
    recipes.features["tf32"] = tf32;
    return recipes;
}

EnvSettings build(const std::map<std::string, std::string>& environment, const std::string& mechanism = "flash2",
                  bool tf32 = true) {
    Decision decision;
    decision.mechanism = mechanism;
    FormatsDecision formats;
    formats.features = {{"tf32", tf32}};
    formats.dtype.recommended = formats.dtype.value = "bfloat16";
    return build_env_settings(one_gpu(), tf32_recipes(), workload(), decision, formats, UserValues(environment));
}

// The settings with the formats stage's dtype choice `dtype`.
EnvSettings build_with_dtype(const DtypeChoice& dtype) {
    Decision decision;
    decision.mechanism = "flash2";
    FormatsDecision formats;
    formats.dtype = dtype;
    return build_env_settings(one_gpu(), tf32_recipes(), workload(), decision, formats, UserValues({}));
}

}  // namespace

TEST_CASE("with nothing set by the user, the recipes' values are written") {
    const auto settings = build({});
    CHECK(settings.get("HF_HUB_ENABLE_HF_TRANSFER") == "1");
    CHECK(settings.get("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
    CHECK(settings.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1");
    CHECK_FALSE(settings.get("NVIDIA_TF32_OVERRIDE").has_value());
    CHECK(settings.get("IMAGES_ATTENTION") == "flash2");
    CHECK(settings.get("IMAGES_BACKEND") == "flash");
    CHECK(settings.get("PROVISION_IMAGES_BACKEND") == "flash");
    CHECK(settings.get("PROVISION_ATTENTION") == "flash2");
    CHECK(settings.kept().empty());
    CHECK(build({}, "eager").get("IMAGES_BACKEND") == "native");
}

TEST_CASE("plain settings and feature switches keep the user's value, and say so") {
    const auto settings = build({{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}, {"NVIDIA_TF32_OVERRIDE", "1"}},
                                "flash2", false);
    CHECK(settings.get("PYTORCH_CUDA_ALLOC_CONF") == "max_split_size_mb:128");
    CHECK(settings.get("NVIDIA_TF32_OVERRIDE") == "1");
    REQUIRE(settings.kept().size() == 2);
    CHECK(settings.is_kept("PYTORCH_CUDA_ALLOC_CONF"));
    CHECK(describe(settings.kept().front()) ==
          "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 kept from the environment (the recipe's value: "
          "expandable_segments:True)");
}

TEST_CASE("a value the user set the same as the recipe's is not reported") {
    const auto settings = build({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
    CHECK(settings.get("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
    CHECK(settings.kept().empty());
}

TEST_CASE("a workload's own backend variable keeps the user's value, noting the mismatch") {
    const auto settings = build({{"IMAGES_BACKEND", "_native_cudnn"}});
    CHECK(settings.get("IMAGES_BACKEND") == "_native_cudnn");
    REQUIRE(settings.kept().size() == 1);
    CHECK_THAT(describe(settings.kept().front()), Catch::Contains("rather than the selected flash2"));
}

TEST_CASE("variables that carry the decision always hold it") {
    const auto settings = build({{"PROVISION_ATTENTION", "sdpa"},
                                 {"IMAGES_ATTENTION", "auto"},
                                 {"PROVISION_IMAGES_BACKEND", "stale-from-an-old-env-file"}});
    CHECK(settings.get("PROVISION_ATTENTION") == "flash2");
    CHECK(settings.get("IMAGES_ATTENTION") == "flash2");
    CHECK(settings.get("PROVISION_IMAGES_BACKEND") == "flash");
    CHECK(settings.kept().empty());
}

TEST_CASE("variable names are checked") {
    EnvSettings settings;
    CHECK_THROWS(settings.set("1BAD", "x"));
    CHECK_THROWS(settings.set("A-B", "x"));
    CHECK_NOTHROW(settings.set("_OK1", "x"));
}

TEST_CASE("PROVISION_DTYPE holds the recommendation, or the user's dtype recorded as kept") {
    DtypeChoice dtype;
    dtype.recommended = dtype.value = "float16";
    auto settings = build_with_dtype(dtype);
    CHECK(settings.get("PROVISION_DTYPE") == "float16");
    CHECK_FALSE(settings.is_kept("PROVISION_DTYPE"));

    dtype.user = DtypeOverride::served;
    dtype.user_value = "BFloat16 ";
    dtype.value = "bfloat16";
    settings = build_with_dtype(dtype);
    CHECK(settings.get("PROVISION_DTYPE") == "bfloat16");
    REQUIRE(settings.is_kept("PROVISION_DTYPE"));
    CHECK(describe(settings.kept().front()) ==
          "PROVISION_DTYPE=bfloat16 kept from the environment (the recipe's value: float16)");

    dtype.value = "float16";  // the user asked for what provision recommends anyway
    CHECK_FALSE(build_with_dtype(dtype).is_kept("PROVISION_DTYPE"));
}
