#include <algorithm>

#include <catch2/catch.hpp>

#include "app/settings.h"
#include "core/error.h"
#include "recipe/recipe_loader.h"
#include "select/classify.h"
#include "select/selection.h"
#include "test_support.h"

using namespace provision;

namespace {

// The user's override as provision reads it: the settings decoded from
// `environment`, then the workload's own variables.
std::optional<Override> override_from(const std::map<std::string, std::string>& environment,
                                      const WorkloadSpec& workload, const RecipeSet& recipes) {
    Options options;
    decode_settings({}, environment, options);
    return read_override(options.overrides, environment, workload, recipes);
}

const RecipeSet& recipes() {
    static const RecipeSet set = load_recipes({test_support::source_path("recipes")});
    return set;
}

Inventory machine(const std::vector<std::pair<std::string, std::string>>& gpus, const std::string& cuda = "13.0") {
    Inventory inventory;
    inventory.source = InventorySource::fixture;
    if (!gpus.empty()) inventory.driver = {true, "580.159.04", cuda};
    int index = 0;
    for (const auto& [name, cc] : gpus) {
        Gpu gpu;
        gpu.index = index;
        gpu.nvml_index = index;
        gpu.name = name;
        gpu.uuid = "GPU-" + std::to_string(index);
        gpu.compute_capability = *ComputeCapability::parse(cc);
        inventory.gpus.push_back(gpu);
        ++index;
    }
    classify_gpus(inventory, recipes());
    return inventory;
}

PackageIndex all_packages() {
    PackageIndex index;
    for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
             {"torch", "2.11.0"}, {"flash_attn", "2.8.3"}, {"flash_attn_3", "3.0.0b1"}, {"sageattention", "2.2.0"},
             {"triton", "3.6.0"}, {"xformers", "0.0.32.post2"}})
        index.add({name, version, "/fake/" + name});
    return index;
}

PackageIndex torch_only() {
    PackageIndex index;
    index.add({"torch", "2.11.0", "/fake/torch"});
    return index;
}

std::string choose(const Inventory& inventory, const PackageIndex& packages,
                   const std::optional<Override>& request = std::nullopt, const CheckVerdicts& checks = {}) {
    return select_mechanism(inventory, recipes(), recipes().workloads.at("generic"), packages, request, checks)
        .mechanism;
}

}  // namespace

TEST_CASE("with every package installed, the generic workload follows the reference matrix") {
    const auto packages = all_packages();
    CHECK(choose(machine({{"B200", "10.0"}}), packages) == "sage");
    CHECK(choose(machine({{"RTX 5090", "12.0"}}), packages) == "sage");
    CHECK(choose(machine({{"GB10", "12.1"}}), packages) == "sage");
    CHECK(choose(machine({{"H100", "9.0"}}), packages) == "flash3");
    CHECK(choose(machine({{"L40S", "8.9"}}), packages) == "flash2");
    CHECK(choose(machine({{"A100", "8.0"}}), packages) == "flash2");
    CHECK(choose(machine({{"A10G", "8.6"}}), packages) == "flash2");
    CHECK(choose(machine({{"T4", "7.5"}}), packages) == "xformers");
    CHECK(choose(machine({{"V100", "7.0"}}), packages) == "xformers");
    CHECK(choose(machine({{"P100", "6.0"}}), packages) == "eager");
    CHECK(choose(machine({{"M40", "5.2"}}), packages) == "eager");
    CHECK(choose(machine({{"K80", "3.7"}}), packages) == "eager");
    CHECK(choose(machine({}), packages) == "eager");
}

TEST_CASE("with only torch installed: sdpa on Volta and newer, eager below") {
    const auto packages = torch_only();
    for (const char* cc : {"12.0", "10.0", "9.0", "8.9", "8.6", "8.0", "7.5", "7.0"}) {
        INFO(cc);
        CHECK(choose(machine({{"gpu", cc}}), packages) == "sdpa");
    }
    for (const char* cc : {"6.1", "5.2", "3.7"}) {
        INFO(cc);
        CHECK(choose(machine({{"gpu", cc}}), packages) == "eager");
    }
    CHECK(choose(machine({}), packages) == "eager");
}

TEST_CASE("a missing package moves to the next mechanism, with the reason recorded") {
    PackageIndex packages = all_packages();
    PackageIndex without_flash3;
    for (const auto& p : packages.packages())
        if (p.name != "flash_attn_3") without_flash3.add(p);
    const auto decision = select_mechanism(machine({{"H100", "9.0"}}), recipes(), recipes().workloads.at("generic"),
                                           without_flash3, std::nullopt, {});
    CHECK(decision.mechanism == "flash2");
    REQUIRE(decision.candidates.front().mechanism == "flash3");
    CHECK_FALSE(decision.candidates.front().accepted);
    CHECK_THAT(decision.candidates.front().reasons.front(), Catch::Contains("flash_attn_3 (not installed)"));
}

TEST_CASE("an installed package marked unusable rejects its mechanisms with the reason") {
    PackageIndex packages = all_packages();
    packages.mark_unusable("Flash-Attn_3",
                           "flash_attn_3 3.0.0b1 is built for Python 3.10; the workload's Python is 3.12");
    CHECK(packages.unusable_reason("flash_attn_3") != nullptr);
    CHECK(packages.unusable_reason("torch") == nullptr);
    const auto decision = select_mechanism(machine({{"H100", "9.0"}}), recipes(), recipes().workloads.at("generic"),
                                           packages, std::nullopt, {});
    CHECK(decision.mechanism == "flash2");
    REQUIRE(decision.candidates.front().mechanism == "flash3");
    CHECK_FALSE(decision.candidates.front().accepted);
    CHECK_THAT(decision.candidates.front().reasons.front(),
               Catch::Contains("flash_attn_3 (flash_attn_3 3.0.0b1 is built for Python 3.10; the workload's Python "
                               "is 3.12)"));
}

TEST_CASE("a version bound is enforced") {
    PackageIndex packages;
    packages.add({"torch", "1.13.1", "/fake/torch"});
    const auto decision = select_mechanism(machine({{"A100", "8.0"}}), recipes(), recipes().workloads.at("generic"),
                                           packages, std::nullopt, {});
    CHECK(decision.mechanism == "eager");
    const auto sdpa = std::find_if(decision.candidates.begin(), decision.candidates.end(),
                                   [](const Candidate& c) { return c.mechanism == "sdpa"; });
    REQUIRE(sdpa != decision.candidates.end());
    CHECK_THAT(sdpa->reasons.front(), Catch::Contains("torch>=2.0 (torch 1.13.1 installed)"));
}

TEST_CASE("an old driver rejects mechanisms that need a newer CUDA") {
    const auto decision = select_mechanism(machine({{"H100", "9.0"}}, "12.2"), recipes(),
                                           recipes().workloads.at("generic"), all_packages(), std::nullopt, {});
    CHECK(decision.mechanism == "flash2");
    CHECK_THAT(decision.candidates.front().reasons.front(), Catch::Contains("CUDA 12.3 or newer"));
}

TEST_CASE("mixed GPUs get a mechanism every visible GPU can serve") {
    const auto packages = all_packages();
    CHECK(choose(machine({{"H100", "9.0"}, {"A100", "8.0"}}), packages) == "flash2");
    CHECK(choose(machine({{"A100", "8.0"}, {"T4", "7.5"}}), packages) == "xformers");
    CHECK(choose(machine({{"H100", "9.0"}, {"P100", "6.0"}}), packages) == "eager");
    CHECK(choose(machine({{"B200", "10.0"}, {"H100", "9.0"}}), packages) == "sage");
}

TEST_CASE("a failed validation check rejects the mechanism and selection falls back") {
    CheckVerdicts checks;
    checks[{0, "attention.bf16.wgmma"}] = {CheckState::failed, "max relative error 0.4 exceeds 0.02"};
    const auto decision = select_mechanism(machine({{"H100", "9.0"}}), recipes(), recipes().workloads.at("generic"),
                                           all_packages(), std::nullopt, checks);
    CHECK(decision.mechanism == "flash2");
    CHECK(decision.outcome == DecisionOutcome::fell_back_after_validation);
    CHECK_THAT(decision.candidates.front().reasons.front(),
               Catch::Contains("check attention.bf16.wgmma failed on GPU 0"));
}

TEST_CASE("overrides: served, refused, forced, unknown") {
    const auto& generic = recipes().workloads.at("generic");
    const auto packages = all_packages();
    const auto h100 = machine({{"H100", "9.0"}});

    SECTION("an alias that the machine can serve") {
        const auto request = override_from({{"PROVISION_ATTENTION", "FA2"}}, generic, recipes());
        REQUIRE(request);
        CHECK(request->mechanism == "flash2");
        const auto decision = select_mechanism(h100, recipes(), generic, packages, request, {});
        CHECK(decision.mechanism == "flash2");
        CHECK(decision.source == DecisionSource::override);
    }
    SECTION("auto means choose") {
        CHECK_FALSE(override_from({{"PROVISION_ATTENTION", "Auto"}}, generic, recipes()).has_value());
    }
    SECTION("a mechanism the hardware cannot serve is refused") {
        const auto request = override_from({{"PROVISION_ATTENTION", "flash3"}}, generic, recipes());
        const auto decision = select_mechanism(machine({{"T4", "7.5"}}), recipes(), generic, packages, request, {});
        CHECK(decision.mechanism.empty());
        CHECK(decision.outcome == DecisionOutcome::override_refused);
        CHECK_THAT(decision.reason, Catch::Contains("PROVISION_ATTENTION=flash3 cannot be served"));
    }
    SECTION("PROVISION_FORCE=1 proceeds with a warning") {
        const auto request =
            override_from({{"PROVISION_ATTENTION", "flash3"}, {"PROVISION_FORCE", "1"}}, generic, recipes());
        const auto decision = select_mechanism(machine({{"T4", "7.5"}}), recipes(), generic, packages, request, {});
        CHECK(decision.mechanism == "flash3");
        CHECK(decision.source == DecisionSource::forced);
        REQUIRE(decision.warnings.size() == 1);
    }
    SECTION("an unknown name is a usage error listing the valid ones") {
        try {
            override_from({{"PROVISION_ATTENTION", "flash5"}}, generic, recipes());
            FAIL("no error");
        } catch (const Error& error) {
            CHECK(error.code() == ExitCode::usage);
            CHECK_THAT(error.what(), Catch::Contains("valid: cudnn, eager, flash2, flash3, flash4, flashinfer, flex, "
                                                     "sage, sdpa, xformers, auto"));
        }
    }
}

TEST_CASE("PROVISION_ATTENTION=auto falls through to the workload's own override variables") {
    const auto& comfyui = recipes().workloads.at("comfyui");
    SECTION("the workload's variable then decides") {
        const auto request = override_from(
            {{"PROVISION_ATTENTION", "auto"}, {"COMFYUI_ATTENTION_MECHANISM", "sage"}}, comfyui, recipes());
        REQUIRE(request);
        CHECK(request->mechanism == "sage");
        CHECK(request->variable == "COMFYUI_ATTENTION_MECHANISM");
    }
    SECTION("auto everywhere means choose") {
        CHECK_FALSE(override_from({{"PROVISION_ATTENTION", "AUTO"}, {"COMFYUI_ATTENTION_MECHANISM", "auto"}}, comfyui,
                                  recipes())
                        .has_value());
    }
    SECTION("a concrete PROVISION_ATTENTION is still read first") {
        const auto request = override_from(
            {{"PROVISION_ATTENTION", "sdpa"}, {"COMFYUI_ATTENTION_MECHANISM", "sage"}}, comfyui, recipes());
        REQUIRE(request);
        CHECK(request->mechanism == "sdpa");
    }
    SECTION("surrounding blanks are ignored") {
        const auto request = override_from({{"PROVISION_ATTENTION", " flash2\n"}}, comfyui, recipes());
        REQUIRE(request);
        CHECK(request->mechanism == "flash2");
    }
}

TEST_CASE("an override the workload has no use for is refused, naming what it accepts") {
    PackageIndex packages = all_packages();
    packages.add({"vllm", "0.26.0", "/fake/vllm"});
    const auto& vllm = recipes().workloads.at("vllm");
    const auto a100 = machine({{"A100", "8.0"}});

    SECTION("refused without PROVISION_FORCE") {
        const auto request = override_from({{"PROVISION_ATTENTION", "sdpa"}}, vllm, recipes());
        const auto decision = select_mechanism(a100, recipes(), vllm, packages, request, {});
        CHECK(decision.mechanism.empty());
        CHECK(decision.outcome == DecisionOutcome::override_refused);
        CHECK_THAT(decision.reason, Catch::Contains("PROVISION_ATTENTION=sdpa cannot be served"));
        CHECK_THAT(decision.reason, Catch::Contains("the 'vllm' workload cannot use sdpa"));
        CHECK_THAT(decision.reason, Catch::Contains("accepts: eager, flash2, flash3, flash4, flashinfer, flex"));
        const auto sdpa = std::find_if(decision.candidates.begin(), decision.candidates.end(),
                                       [](const Candidate& c) { return c.mechanism == "sdpa"; });
        REQUIRE(sdpa != decision.candidates.end());
        CHECK_FALSE(sdpa->accepted);
    }
    SECTION("PROVISION_FORCE=1 proceeds with a warning") {
        const auto request =
            override_from({{"PROVISION_ATTENTION", "xformers"}, {"PROVISION_FORCE", "1"}}, vllm, recipes());
        const auto decision = select_mechanism(a100, recipes(), vllm, packages, request, {});
        CHECK(decision.mechanism == "xformers");
        CHECK(decision.source == DecisionSource::forced);
        REQUIRE(decision.warnings.size() == 1);
        CHECK_THAT(decision.warnings.front(), Catch::Contains("cannot use xformers"));
    }
    SECTION("a mechanism the workload only takes when asked for (ComfyUI's flash3) is served") {
        const auto& comfyui = recipes().workloads.at("comfyui");
        const auto request = override_from({{"COMFYUI_ATTENTION_MECHANISM", "flash3"}}, comfyui, recipes());
        const auto decision = select_mechanism(machine({{"H100", "9.0"}}), recipes(), comfyui, packages, request, {});
        CHECK(decision.mechanism == "flash3");
        CHECK(decision.source == DecisionSource::override);
    }
    SECTION("ComfyUI has no FlexAttention option") {
        const auto& comfyui = recipes().workloads.at("comfyui");
        const auto request = override_from({{"COMFYUI_ATTENTION_MECHANISM", "flex"}}, comfyui, recipes());
        const auto decision = select_mechanism(a100, recipes(), comfyui, packages, request, {});
        CHECK(decision.mechanism.empty());
        CHECK(decision.outcome == DecisionOutcome::override_refused);
    }
    SECTION("the generic workload takes every mechanism but FlashInfer, a serving library") {
        const auto& generic = recipes().workloads.at("generic");
        for (const auto& name : recipes().mechanism_names()) {
            INFO(name);
            CHECK(workload_accepts(generic, name) == (name != "flashinfer"));
        }
    }
}

TEST_CASE("no mechanism serving leaves every candidate rejected with its reasons") {
    PackageIndex none;
    const auto decision = select_mechanism(machine({{"A100", "8.0"}}), recipes(), recipes().workloads.at("vllm"), none,
                                           std::nullopt, {});
    CHECK(decision.mechanism.empty());
    REQUIRE_FALSE(decision.candidates.empty());
    for (const auto& candidate : decision.candidates) {
        INFO(candidate.mechanism);
        CHECK_FALSE(candidate.accepted);
        CHECK_FALSE(candidate.reasons.empty());
    }
}

TEST_CASE("flash2's assumed ceiling holds only while flash-attn's device code is unknown") {
    // B200 + H100: the preference key is hopper (the weakest GPU); flash3 cannot serve the B200.
    auto packages = all_packages();
    const auto machine_with_blackwell = machine({{"B200", "10.0"}, {"H100", "9.0"}});
    const auto unknown = select_mechanism(machine_with_blackwell, recipes(), recipes().workloads.at("generic"),
                                          packages, std::nullopt, {});
    CHECK(unknown.mechanism == "sage");
    const auto flash2_it = std::find_if(unknown.candidates.begin(), unknown.candidates.end(),
                                        [](const Candidate& c) { return c.mechanism == "flash2"; });
    REQUIRE(flash2_it != unknown.candidates.end());
    const auto& flash2 = *flash2_it;
    CHECK_THAT(flash2.reasons.front(), Catch::Contains("newer than sm_90, the newest this recipe assumes while the "
                                                       "device code of flash_attn cannot be read"));

    // Read (and judged runnable): the ceiling gives way.
    packages.mark_device_code_read("flash-attn");
    CHECK(choose(machine_with_blackwell, packages) == "flash2");
}

TEST_CASE("packages_for adds a package on GPUs of one architecture") {
    PackageIndex old_triton;
    for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
             {"torch", "2.6.0"}, {"sageattention", "2.2.0"}, {"triton", "3.2.0"}})
        old_triton.add({name, version, "/fake/" + name});
    CHECK(choose(machine({{"B200", "10.0"}}), old_triton) == "sdpa");
    CHECK(choose(machine({{"H100", "9.0"}}), old_triton) == "sage");
    const auto& sage = recipes().mechanisms.at("sage");
    CHECK(sage.packages_on(architectures_of(machine({{"B200", "10.0"}}))).size() == sage.packages.size() + 1);
    CHECK(sage.packages_on(architectures_of(machine({{"H100", "9.0"}}))).size() == sage.packages.size());
}

TEST_CASE("the 2026 mechanisms come first where their authors put them, per Blackwell family") {
    auto packages = all_packages();
    packages.add({"flash_attn_4", "4.0.0b8", "/fake/flash_attn_4"});
    packages.add({"nvidia_cutlass_dsl", "4.7.1", "/fake/nvidia_cutlass_dsl"});
    CHECK(choose(machine({{"B200", "10.0"}}), packages) == "flash4");
    CHECK(choose(machine({{"GB300", "10.3"}}), packages) == "flash4");
    CHECK(choose(machine({{"RTX 5090", "12.0"}}), packages) == "sage");  // FA4 after FA2 and Sage there
    CHECK(choose(machine({{"H100", "9.0"}}), packages) == "flash3");     // FA3 before FA4 on Hopper
    CHECK(choose(machine({{"A100", "8.0"}}), packages) == "flash2");     // no FA4 in the Ampere order
    // A B200 beside an RTX 5090: the datacenter order (the lower capability) rules, FA4 serves both.
    CHECK(choose(machine({{"B200", "10.0"}, {"RTX 5090", "12.0"}}), packages) == "flash4");
}

TEST_CASE("a package's presence can raise the driver a mechanism needs") {
    PackageIndex packages = torch_only();
    packages.add({"flash_attn_4", "4.0.0b8", "/fake/a"});
    packages.add({"nvidia-cutlass-dsl", "4.7.1", "/fake/b"});
    CHECK(choose(machine({{"B200", "10.0"}}, "12.9"), packages) == "flash4");
    packages.add({"nvidia-cutlass-dsl-libs-cu13", "4.7.1", "/fake/c"});
    const auto decision = select_mechanism(machine({{"B200", "10.0"}}, "12.9"), recipes(),
                                           recipes().workloads.at("generic"), packages, std::nullopt, {});
    CHECK(decision.mechanism == "sdpa");
    CHECK_THAT(decision.candidates.front().reasons.front(),
               Catch::Equals("needs a driver for CUDA 13.0 or newer (nvidia-cutlass-dsl-libs-cu13 4.7.1 is installed); "
                             "this driver supports CUDA 12.9"));
    CHECK(decision.candidates.front().hardware_fits == false);
}

TEST_CASE("packages of one release: versions must agree, local labels aside") {
    PackageIndex packages = torch_only();
    packages.add({"vllm", "0.21.0", "/fake/vllm"});
    packages.add({"flashinfer-python", "0.6.18", "/fake/a"});
    packages.add({"flashinfer-jit-cache", "0.6.18+cu130", "/fake/b"});
    packages.add({"flashinfer-cubin", "0.6.18", "/fake/c"});
    const auto& vllm = recipes().workloads.at("vllm");
    const auto agree = select_mechanism(machine({{"B200", "10.0"}}), recipes(), vllm, packages, std::nullopt, {});
    CHECK(agree.mechanism == "flashinfer");

    PackageIndex mixed = torch_only();
    mixed.add({"vllm", "0.21.0", "/fake/vllm"});
    mixed.add({"flashinfer-python", "0.6.18", "/fake/a"});
    mixed.add({"flashinfer-jit-cache", "0.6.18+cu130", "/fake/b"});
    mixed.add({"flashinfer-cubin", "0.6.17", "/fake/c"});
    const auto refused = select_mechanism(machine({{"B200", "10.0"}}), recipes(), vllm, mixed, std::nullopt, {});
    CHECK(refused.mechanism == "flash2");
    CHECK_THAT(refused.candidates.front().reasons.front(),
               Catch::Equals("needs flashinfer-cubin and flashinfer-python of one release: flashinfer-cubin 0.6.17 is "
                             "installed with flashinfer-python 0.6.18"));
    // What keeps it out is software: --explain names it as best here.
    CHECK(refused.candidates.front().hardware_fits);
    REQUIRE(best_not_served(refused) != nullptr);
    CHECK(best_not_served(refused)->mechanism == "flashinfer");
}

TEST_CASE("cuDNN attention needs the cuDNN torch loads to be 9.15.1 or newer") {
    PackageIndex packages = torch_only();
    const auto decide = [&](const PackageIndex& index) {
        return select_mechanism(machine({{"H100", "9.0"}}), recipes(), recipes().workloads.at("generic"), index,
                                std::nullopt, {});
    };
    const auto unknown = decide(packages);
    CHECK(unknown.mechanism == "sdpa");
    const auto cudnn_candidate = [](const Decision& decision) {
        return *std::find_if(decision.candidates.begin(), decision.candidates.end(),
                             [](const Candidate& c) { return c.mechanism == "cudnn"; });
    };
    CHECK_THAT(cudnn_candidate(unknown).reasons.front(),
               Catch::StartsWith("needs cuDNN 9.15.1 or newer; no cuDNN of torch's was found"));

    packages.set_cudnn({"9.15.0", "the file name libcudnn.so.9.15.0", "/usr/lib/libcudnn.so.9.15.0"});
    CHECK_THAT(cudnn_candidate(decide(packages)).reasons.front(),
               Catch::Equals("needs cuDNN 9.15.1 or newer; torch loads cuDNN 9.15.0 (the file name "
                             "libcudnn.so.9.15.0)"));
    packages.set_cudnn({"9.15.1.9", "nvidia-cudnn-cu13 9.15.1.9", "/fake/nvidia_cudnn_cu13"});
    CHECK(decide(packages).mechanism == "cudnn");
}

TEST_CASE("a family's order serves an architecture without one of its own") {
    test_support::TempDir dir;
    test_support::write_file(dir.file("family.toml"),
                             "[workloads.w.preference]\nblackwell = [\"sdpa\"]\ndefault = [\"eager\"]\n");
    const RecipeSet set = load_recipes({test_support::source_path("recipes"), dir.file("family.toml")});
    const auto& workload = set.workloads.at("w");
    Inventory b200 = machine({{"B200", "10.0"}});
    CHECK(preference_key(b200, workload) == "blackwell");
    CHECK(preference_key(machine({{"H100", "9.0"}}), workload) == "default");
}
