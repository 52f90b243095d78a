#include <catch2/catch.hpp>

#include "recipe/recipe_loader.h"
#include "select/classify.h"
#include "test_support.h"

using namespace provision;

TEST_CASE("every current compute capability maps to its architecture") {
    const RecipeSet recipes = load_recipes({test_support::source_path("recipes")});
    const std::vector<std::pair<std::string, std::string>> table = {
        {"12.1", "blackwell_consumer"},   {"12.0", "blackwell_consumer"},   {"11.0", "blackwell_datacenter"},
        {"10.3", "blackwell_datacenter"}, {"10.1", "blackwell_datacenter"}, {"10.0", "blackwell_datacenter"},
        {"9.0", "hopper"},     {"8.9", "ada"},
        {"8.7", "ampere"},     {"8.6", "ampere"},     {"8.0", "ampere"},     {"7.5", "turing"},
        {"7.2", "volta"},      {"7.0", "volta"},      {"6.2", "pascal"},     {"6.1", "pascal"},
        {"6.0", "pascal"},     {"5.3", "maxwell"},    {"5.2", "maxwell"},    {"5.0", "maxwell"},
        {"3.7", "older"},      {"3.0", "older"},      {"13.0", "unknown"},   {"8.8", "unknown"},
    };
    for (const auto& [cc, family] : table) {
        INFO("compute capability " << cc);
        CHECK(classify_capability(*ComputeCapability::parse(cc), recipes) == family);
    }
}

TEST_CASE("classify_gpus fills every GPU's architecture and family") {
    const RecipeSet recipes = load_recipes({test_support::source_path("recipes")});
    Inventory inventory;
    inventory.gpus.push_back({0, 0, "H100", "GPU-a", {9, 0}, 81559, ""});
    inventory.gpus.push_back({1, 1, "T4", "GPU-b", {7, 5}, 15360, ""});
    inventory.gpus.push_back({2, 2, "B200", "GPU-c", {10, 0}, 183359, ""});
    inventory.gpus.push_back({3, 3, "RTX 5090", "GPU-d", {12, 0}, 32607, ""});
    inventory.gpus.push_back({4, 4, "future", "GPU-e", {13, 0}, 1, ""});
    classify_gpus(inventory, recipes);
    CHECK(inventory.gpus[0].architecture == "hopper");
    CHECK(inventory.gpus[0].family == "hopper");
    CHECK(inventory.gpus[1].architecture == "turing");
    CHECK(inventory.gpus[2].architecture == "blackwell_datacenter");
    CHECK(inventory.gpus[2].family == "blackwell");
    CHECK(inventory.gpus[3].architecture == "blackwell_consumer");
    CHECK(inventory.gpus[3].family == "blackwell");
    CHECK(inventory.gpus[4].architecture == "unknown");
    CHECK(inventory.gpus[4].family == "unknown");
}
