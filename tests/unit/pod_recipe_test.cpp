// The [pod] table of the recipes (recipes/pod.toml) and a workload's
// p2p_settings: the built-in figures, merging a user's rows over them, and
// every bad value refused with file:line:column.
#include <catch2/catch.hpp>

#include "recipe/recipe_loader.h"
#include "test_support.h"

using namespace provision;
using test_support::malformed_recipe_message;
using test_support::TempDir;
using test_support::write_file;

namespace {

const std::string kBuiltin = test_support::source_path("recipes");

// The message of loading the built-in recipes with `text` as a user recipe.
std::string message_of(const std::string& text) {
    TempDir dir;
    write_file(dir.file("user.toml"), text);
    return malformed_recipe_message({kBuiltin, dir.file("user.toml")});
}

}  // namespace

TEST_CASE("the built-in [pod] recipe holds the figures, with a source for each", "[pod][recipe]") {
    const RecipeSet recipes = load_recipes({kBuiltin});
    const PodRecipe& pod = recipes.pod;
    CHECK(pod.p2p_slow_below == 0.5);
    CHECK(pod.host_copy_slow_below == 0.5);
    CHECK(pod.shm_min_bytes == 1024ull << 20);
    for (unsigned generation : {2u, 3u, 4u, 5u}) CHECK(pod.nvlink_figure(generation, "") != nullptr);
    for (unsigned generation : {1u, 2u, 3u, 4u, 5u, 6u}) CHECK(pod.pcie_figure(generation) != nullptr);
    // Without NVML's version, the architecture decides.
    REQUIRE(pod.nvlink_figure(0, "hopper"));
    CHECK(pod.nvlink_figure(0, "hopper")->generation == 4);
    CHECK(pod.nvlink_figure(0, "ada") == nullptr);
    CHECK(pod.pcie_figure(4)->x16_gb_per_s == 26.3);
    CHECK_FALSE(pod.pcie_figure(4)->estimate);
    CHECK(pod.pcie_figure(5)->estimate);
    REQUIRE(pod.known_broken_p2p.size() == 2);
    CHECK(pod.known_broken_p2p[0].driver_below == "550.40.07");
    CHECK(pod.known_broken_p2p[1].max_gpus == 7);
    CHECK(pod.p2p_settings.env_pcie_broken.at("NCCL_P2P_LEVEL") == "NVL");
    CHECK(pod.p2p_settings.env_broken.at("NCCL_P2P_DISABLE") == "1");
    CHECK(recipes.workloads.at("vllm").p2p_settings.env_broken.at("VLLM_SKIP_P2P_CHECK") == "0");
    CHECK(recipes.workloads.at("generic").p2p_settings.empty());
}

TEST_CASE("a user recipe replaces a figure by its generation and adds known-broken rules", "[pod][recipe]") {
    TempDir dir;
    write_file(dir.file("user.toml"), "[pod]\nshm_min_mib = 256\np2p_slow_below = 0.3\n"
                                      "[[pod.pcie]]\ngeneration = 4\nx16_gb_per_s = 24.0\nsource = \"our own "
                                      "nodes\"\n"
                                      "[[pod.known_broken_p2p]]\ngpu_names = [\"A100-PCIE\"]\nsource = \"our racks\"\n");
    const RecipeSet recipes = load_recipes({kBuiltin, dir.file("user.toml")});
    CHECK(recipes.pod.shm_min_bytes == 256ull << 20);
    CHECK(recipes.pod.p2p_slow_below == 0.3);
    CHECK(recipes.pod.pcie_figure(4)->x16_gb_per_s == 24.0);
    CHECK(recipes.pod.pcie.size() == 6);
    REQUIRE(recipes.pod.known_broken_p2p.size() == 3);
    CHECK(recipes.pod.known_broken_p2p[2].min_gpus == 2);
    CHECK(recipes.pod.known_broken_p2p[2].driver_below.empty());
}

TEST_CASE("bad [pod] values are refused with file:line:column", "[pod][recipe]") {
    CHECK(message_of("[pod]\np2p_slow_below = 1.5\n").find("user.toml:2:18: 'p2p_slow_below' in [pod] is a share") !=
          std::string::npos);
    CHECK(message_of("[pod]\nshm_min_mib = \"1g\"\n").find("user.toml:2:15: 'shm_min_mib' in [pod] must be an "
                                                          "integer") != std::string::npos);
    // In bytes it would not fit 64 bits: refused, never wrapped to 1 MiB.
    CHECK(message_of("[pod]\nshm_min_mib = 17592186044417\n")
              .find("user.toml:2:15: 'shm_min_mib' in [pod] must be an integer from 0 to 17592186044415, not "
                    "17592186044417") != std::string::npos);
    CHECK(message_of("[pod]\nshm_size = 1\n").find("unknown key 'shm_size' in [pod]") != std::string::npos);
    CHECK(message_of("[[pod.pcie]]\ngeneration = 0\nx16_gb_per_s = 1.0\nsource = \"x\"\n")
              .find("user.toml:2:14: 'generation' in [[pod.pcie]] entry 1 must be an integer from 1 to 9") !=
          std::string::npos);
    CHECK(message_of("[[pod.pcie]]\ngeneration = 4\nx16_gb_per_s = -1\nsource = \"x\"\n")
              .find("'x16_gb_per_s' in [[pod.pcie]] entry 1 must be a positive number") != std::string::npos);
    CHECK(message_of("[[pod.pcie]]\ngeneration = 4\nx16_gb_per_s = 1.0\n")
              .find("[[pod.pcie]] entry 1 needs 'source'") != std::string::npos);
    CHECK(message_of("[[pod.nvlink]]\ngeneration = 4\ngb_per_s_per_link = 1.0\narchitectures = [\"hoper\"]\n"
                     "source = \"x\"\n")
              .find("unknown architecture 'hoper' in [[pod.nvlink]]; did you mean 'hopper'?") != std::string::npos);
    CHECK(message_of("[[pod.known_broken_p2p]]\ngpu_names = []\nsource = \"x\"\n")
              .find("needs 'gpu_names'") != std::string::npos);
    CHECK(message_of("[[pod.known_broken_p2p]]\ngpu_names = [\"RTX\"]\ndriver_below = \"five\"\nsource = \"x\"\n")
              .find("user.toml:3:16: 'driver_below' in [[pod.known_broken_p2p]] entry 1 must be a driver version") !=
          std::string::npos);
    CHECK(message_of("[[pod.known_broken_p2p]]\ngpu_names = [\"RTX\"]\nmin_gpus = 1\nsource = \"x\"\n")
              .find("'min_gpus' in [[pod.known_broken_p2p]] entry 1 must be an integer from 2") != std::string::npos);
    CHECK(message_of("[pod.p2p_settings]\nenv_broken = { \"NCCL P2P\" = \"1\" }\n")
              .find("'NCCL P2P' in 'env_broken' of [pod.p2p_settings] is not an environment variable name") !=
          std::string::npos);
    CHECK(message_of("[pod.p2p_settings]\nenv_broken = { NCCL_P2P_DISABLE = 1 }\n")
              .find("[pod.p2p_settings]") != std::string::npos);
    CHECK(message_of("[workloads.generic.p2p_settings]\nenv_broken = { LD_PRELOAD = \"x.so\" }\n")
              .find("'LD_PRELOAD' in 'env_broken' of [workloads.generic.p2p_settings] is a loader, start-up or "
                    "device-selection variable") != std::string::npos);
    CHECK(message_of("[pod]\np2p_slow_below = 0.5\n[policy]\np2p_slow = \"bad\"\n")
              .find("'p2p_slow' in [policy] must be \"ok\", \"degraded\" or \"failed\"") != std::string::npos);
}
