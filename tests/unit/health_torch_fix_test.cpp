// The fix a torch refusal names, from the built-in [torch_builds] table.
#include <catch2/catch.hpp>

#include "health/torch_fix.h"
#include "recipe/recipe_loader.h"
#include "select/classify.h"
#include "test_support.h"

using namespace provision;

namespace {

const RecipeSet& recipes() {
    static const RecipeSet set = load_recipes({test_support::source_path("recipes")});
    return set;
}

Inventory one_gpu(const std::string& capability, const std::string& driver_cuda) {
    Inventory inventory;
    inventory.driver = {true, "580.159.04", driver_cuda};
    Gpu gpu;
    gpu.name = "GPU";
    gpu.compute_capability = *ComputeCapability::parse(capability);
    inventory.gpus.push_back(gpu);
    return inventory;
}

std::string serving(const std::string& capability, const std::string& driver_cuda) {
    const TorchBuildSpec* build = serving_torch_build(recipes().torch_builds, one_gpu(capability, driver_cuda));
    return build ? build->name : "none";
}

}  // namespace

TEST_CASE("the newest CUDA the driver runs whose wheels carry SASS for the GPU") {
    CHECK(serving("12.0", "13.0") == "cu130");  // RTX 5090, R580
    CHECK(serving("12.0", "12.8") == "cu128");  // RTX 5090, R570
    CHECK(serving("12.0", "12.4") == "cu128");  // minor-version compatibility: 12.8 SASS runs on a 12.x driver
    CHECK(serving("9.0", "12.8") == "cu128");
    CHECK(serving("7.0", "13.0") == "cu128-volta");  // V100: the last 12.8 wheels with sm_70
    CHECK(serving("6.0", "13.0") == "cu126");        // P100
    CHECK(serving("6.0", "11.4") == "cu118");        // an R470 driver runs CUDA 11.x only
    CHECK(serving("3.7", "13.0") == "none");         // K80: no wheel here carries sm_37
    CHECK(serving("8.9", "13.0") == "cu130");        // Ada runs sm_86 SASS
}

TEST_CASE("the fix in words, and none without a driver version") {
    CHECK(torch_fix_words(recipes().torch_builds, one_gpu("12.0", "13.0")) ==
          "torch>=2.9 from https://download.pytorch.org/whl/cu130 (CUDA 13.0) runs here");
    CHECK(torch_fix_words(recipes().torch_builds, one_gpu("12.0", "")).empty());
}
