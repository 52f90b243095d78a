// The formats stage on the built-in recipes: each number format's state per
// GPU and for the pod, the features that are on, the package gates, and the
// dtype (recommended, or the user's kept or refused).
#include <catch2/catch.hpp>

#include "app/settings.h"
#include "core/error.h"
#include "formats/formats.h"
#include "recipe/recipe_loader.h"
#include "select/classify.h"

using namespace provision;

namespace {

const RecipeSet& builtin() {
    static const RecipeSet recipes = load_recipes_over_builtins(std::nullopt, {});
    return recipes;
}

Gpu gpu(int index, const std::string& name, int major, int minor) {
    Gpu g;
    g.index = index;
    g.name = name;
    g.compute_capability = {major, minor};
    return g;
}

Inventory machine(std::vector<Gpu> gpus) {
    Inventory inventory;
    inventory.driver = {true, "580.159.04", "13.0"};
    inventory.gpus = std::move(gpus);
    classify_gpus(inventory, builtin());
    return inventory;
}

const Gpu h100 = gpu(0, "NVIDIA H100 80GB HBM3", 9, 0);
const Gpu t4 = gpu(1, "Tesla T4", 7, 5);

PackageIndex with_torch(const std::string& version) {
    PackageIndex packages;
    packages.add({"torch", version, "/sp/torch-" + version + ".dist-info"});
    return packages;
}

FormatsDecision decide(const Inventory& inventory, const CheckVerdicts& checks = {},
                       const std::map<std::string, std::string>& environment = {},
                       const PackageIndex& packages = {}, const std::string& mechanism = "sdpa",
                       const std::string& workload = "generic") {
    Options options;
    decode_settings({}, environment, options);  // PROVISION_DTYPE and PROVISION_FORCE, as provision reads them
    return decide_formats(inventory, builtin(), builtin().workloads.at(workload), mechanism, packages, checks,
                          options.overrides);
}

const FormatReport& format(const FormatsDecision& decision, const std::string& name) {
    for (const auto& f : decision.formats)
        if (f.name == name) return f;
    FAIL("no format " << name);
    return decision.formats.front();
}

CheckVerdicts passed_on(int gpu_index, std::initializer_list<const char*> names) {
    CheckVerdicts verdicts;
    for (const char* name : names) verdicts[{gpu_index, name}] = {CheckState::passed, ""};
    return verdicts;
}

}  // namespace

TEST_CASE("the recipes' number formats: fp16, bf16, fp8, and Blackwell's fp4, fp6, mxfp8, nvfp4 without a check") {
    std::vector<std::string> names;
    for (const auto& [name, feature] : builtin().features)
        if (feature.number_format) names.push_back(name);
    CHECK(names == std::vector<std::string>{"bf16", "fp16", "fp4", "fp6", "fp8", "mxfp8", "nvfp4"});
    CHECK(builtin().features.at("mxfp8").checks.empty());
    CHECK(builtin().features.at("nvfp4").checks.empty());
    CHECK(builtin().features.at("fp8").checks == std::vector<std::string>{"gemm.fp8", "gemm.fp8.wgmma"});
    CHECK(builtin().features.at("fp4").checks.empty());
    CHECK_FALSE(builtin().features.at("tf32").number_format);
    CHECK(builtin().dtype_preference == std::vector<std::string>{"bfloat16", "float16", "float32"});
}

TEST_CASE("an H100 whose checks passed: every format proven but Blackwell's") {
    const auto decision = decide(machine({h100}), passed_on(0, {"attention.fp16", "attention.bf16", "gemm.fp8",
                                                                "gemm.fp8.wgmma"}));
    CHECK(format(decision, "fp16").state == FormatState::passed);
    CHECK(format(decision, "bf16").state == FormatState::passed);
    CHECK(format(decision, "fp8").state == FormatState::passed);
    CHECK(format(decision, "fp8").gpus.front().why == "proven by gemm.fp8, gemm.fp8.wgmma");
    CHECK(format(decision, "fp4").state == FormatState::unsupported);
    CHECK(decision.features.at("fp8"));
    CHECK(decision.features.at("tf32"));
    CHECK(decision.dtype.recommended == "bfloat16");
    CHECK(decision.dtype.value == "bfloat16");
    CHECK(decision.dtype.user == DtypeOverride::none);
}

TEST_CASE("without check results the formats are skipped and the recommendation comes from the recipes") {
    const auto decision = decide(machine({h100}));
    CHECK(format(decision, "bf16").state == FormatState::skipped);
    CHECK(format(decision, "bf16").why == "GPU 0 (NVIDIA H100 80GB HBM3, hopper, compute capability 9.0): "
                                         "attention.bf16 did not run");
    CHECK(decision.features.at("bf16"));
    CHECK(decision.dtype.recommended == "bfloat16");
}

TEST_CASE("an H100 with a T4: float16, and the T4 is named as what limits bf16 and fp8") {
    const auto decision = decide(machine({h100, t4}));
    const auto& bf16 = format(decision, "bf16");
    CHECK(bf16.state == FormatState::unsupported);
    CHECK(bf16.limiting_gpu == 1);
    CHECK(bf16.why == "GPU 1 (Tesla T4, turing, compute capability 7.5): needs compute capability 8.0 or newer");
    CHECK(format(decision, "fp8").limiting_gpu == 1);
    CHECK(format(decision, "fp16").state == FormatState::skipped);
    CHECK_FALSE(decision.features.at("bf16"));
    CHECK_FALSE(decision.features.at("fp8"));
    CHECK(decision.dtype.recommended == "float16");
    CHECK_THAT(decision.dtype.reason, Catch::Contains("not bfloat16: bf16 is unsupported on GPU 1 (Tesla T4"));
}

TEST_CASE("a V100's fp16 is unverified (no check runs on sm_70) and still recommended") {
    const auto decision = decide(machine({gpu(0, "Tesla V100-SXM2-16GB", 7, 0)}));
    CHECK(format(decision, "fp16").state == FormatState::unverified);
    CHECK(decision.dtype.recommended == "float16");
}

TEST_CASE("a B200: fp4 and fp6 are unverified, from the recipes alone") {
    const auto decision = decide(machine({gpu(0, "NVIDIA B200", 10, 0)}), passed_on(0, {"gemm.fp8"}));
    CHECK(format(decision, "fp4").state == FormatState::unverified);
    CHECK(format(decision, "fp4").why == "GPU 0 (NVIDIA B200, blackwell_datacenter, compute capability 10.0): no "
                                         "bundled check proves fp4");
    CHECK(format(decision, "fp6").state == FormatState::unverified);
    CHECK(format(decision, "fp8").state == FormatState::passed);  // gemm.fp8.wgmma is Hopper's alone
}

TEST_CASE("no GPU: every format unsupported, float32") {
    const auto decision = decide(machine({}));
    for (const auto& f : decision.formats) CHECK(f.state == FormatState::unsupported);
    CHECK(decision.dtype.recommended == "float32");
    CHECK(decision.dtype.value == "float32");
}

TEST_CASE("a failed check turns its format off, and the worst GPU decides") {
    CheckVerdicts verdicts = passed_on(0, {"attention.bf16", "gemm.fp8"});
    verdicts[{1, "attention.bf16"}] = {CheckState::passed, ""};
    verdicts[{1, "gemm.fp8"}] = {CheckState::failed, "max relative error 0.4 exceeds the tolerance 0.01"};
    const auto decision = decide(machine({gpu(0, "NVIDIA L40S", 8, 9), gpu(1, "NVIDIA L40S", 8, 9)}), verdicts);
    const auto& fp8 = format(decision, "fp8");
    CHECK(fp8.state == FormatState::failed);
    CHECK(fp8.limiting_gpu == 1);
    CHECK_THAT(fp8.why, Catch::Contains("check gemm.fp8 failed: max relative error 0.4"));
    CHECK(fp8.gpus.front().state == FormatState::passed);
    CHECK_FALSE(decision.features.at("fp8"));
    CHECK(format(decision, "bf16").state == FormatState::passed);
    CHECK(decision.dtype.recommended == "bfloat16");
}

TEST_CASE("fp8 on Ada needs torch 2.3 when torch is installed; Hopper does not, nor a machine without torch") {
    const Inventory l40s = machine({gpu(0, "NVIDIA L40S", 8, 9)});
    const auto old_torch = decide(l40s, {}, {}, with_torch("2.2.1"));
    CHECK_FALSE(old_torch.features.at("fp8"));
    CHECK(format(old_torch, "fp8").state == FormatState::skipped);  // the hardware is not in question
    REQUIRE(old_torch.messages.size() == 1);
    CHECK(old_torch.messages.front().severity == Severity::note);
    CHECK(old_torch.messages.front().text == "fp8 is off: GPU 0 (NVIDIA L40S, ada, compute capability 8.9) needs torch>=2.3 "
                                     "(torch 2.2.1 installed)");
    CHECK(decide(l40s, {}, {}, with_torch("2.3.0")).features.at("fp8"));
    CHECK(decide(l40s).features.at("fp8"));
    CHECK(decide(machine({h100}), {}, {}, with_torch("2.2.1")).features.at("fp8"));
}

TEST_CASE("a mechanism's or a workload's own dtype order wins over [dtypes]") {
    RecipeSet recipes = builtin();
    recipes.mechanisms.at("flex").dtype_preference = {"float16", "bfloat16", "float32"};
    Inventory a100;
    a100.gpus = {gpu(0, "NVIDIA A100-SXM4-80GB", 8, 0)};
    classify_gpus(a100, recipes);
    WorkloadSpec workload = recipes.workloads.at("generic");
    const auto flex = decide_formats(a100, recipes, workload, "flex", {}, {}, {});
    CHECK(flex.dtype.recommended == "float16");
    CHECK(flex.dtype.order_source == "the flex mechanism's recipe");
    CHECK(decide_formats(a100, recipes, workload, "sdpa", {}, {}, {}).dtype.recommended == "bfloat16");
    workload.dtype_preference = {"float32"};
    const auto own = decide_formats(a100, recipes, workload, "flex", {}, {}, {});
    CHECK(own.dtype.recommended == "float32");
    CHECK(own.dtype.order_source == "the 'generic' workload's recipe");
    // The built-in flex recipe leaves the order alone.
    CHECK(decide(machine({gpu(0, "NVIDIA A100-SXM4-80GB", 8, 0)}), {}, {}, {}, "flex").dtype.recommended == "bfloat16");
}

TEST_CASE("the user's PROVISION_DTYPE is kept where every GPU runs it, refused where one cannot") {
    const Inventory pod = machine({h100, t4});
    const auto asked = decide(pod, {}, {{"PROVISION_DTYPE", " Float16 "}});
    CHECK(asked.dtype.user == DtypeOverride::served);
    CHECK(asked.dtype.value == "float16");

    const auto refused = decide(pod, {}, {{"PROVISION_DTYPE", "bfloat16"}});
    CHECK(refused.dtype.user == DtypeOverride::unsupported);
    CHECK(refused.dtype.problem == "bf16 is unsupported on GPU 1: needs compute capability 8.0 or newer");
    CHECK(refused.messages.back().severity == Severity::error);  // the run fails for it (exit 4)
    CHECK_THAT(refused.messages.back().text, Catch::Contains("PROVISION_DTYPE=bfloat16 cannot be served"));

    const auto forced = decide(pod, {}, {{"PROVISION_DTYPE", "bfloat16"}, {"PROVISION_FORCE", "1"}});
    CHECK(forced.dtype.user == DtypeOverride::forced);
    CHECK(forced.dtype.value == "bfloat16");
    REQUIRE_FALSE(forced.messages.empty());
    CHECK(forced.messages.back().severity == Severity::warning);
    CHECK(forced.messages.back().text.rfind("PROVISION_DTYPE=bfloat16 is forced by PROVISION_FORCE=1", 0) == 0);

    CheckVerdicts failed;
    failed[{0, "attention.bf16"}] = {CheckState::failed, "timeout"};
    CHECK(decide(machine({h100}), failed, {{"PROVISION_DTYPE", "bfloat16"}}).dtype.user ==
          DtypeOverride::failed_check);

    CHECK(decide(pod, {}, {{"PROVISION_DTYPE", "float32"}}).dtype.user == DtypeOverride::served);
    CHECK(decide(pod, {}, {{"PROVISION_DTYPE", "auto"}}).dtype.user == DtypeOverride::none);
    // Without a GPU there is nothing to refuse.
    CHECK(decide(machine({}), {}, {{"PROVISION_DTYPE", "bfloat16"}}).dtype.user == DtypeOverride::served);
}

TEST_CASE("an unknown PROVISION_DTYPE is a usage error listing the valid names") {
    try {
        decide(machine({h100}), {}, {{"PROVISION_DTYPE", "bf16"}});
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::usage);
        CHECK(std::string(error.what()) ==
              "PROVISION_DTYPE=bf16: unknown dtype (valid: bfloat16, float16, float32, auto)");
    }
}
