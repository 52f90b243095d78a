// Kubernetes' label rules as provision applies them (core/label_rules.h):
// names, values and prefixes, row by row.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/label_rules.h"
#include "publish/publish.h"
#include "recipe/recipe_loader.h"

using namespace provision;

TEST_CASE("label values: empty, or up to 63 of [A-Za-z0-9._-] with alphanumeric ends") {
    struct Row {
        std::string value;
        bool valid;
    };
    for (const auto& row : std::vector<Row>{
             {"", true},
             {"true", true},
             {"9.0", true},
             {"580.159.04", true},
             {"NVIDIA-H100-80GB-HBM3", true},
             {"a_b-c.d", true},
             {std::string(63, 'x'), true},
             {std::string(64, 'x'), false},
             {"-leading", false},
             {"trailing.", false},
             {"two words", false},
             {"quote\"d", false},
             {"it's", false},
             {"GeForce\xc2\xae", false},  // non-ASCII
             {"line\nbreak", false},
             {"a/b", false},
         }) {
        INFO('"' << row.value << '"');
        CHECK(label_value_problem(row.value).has_value() == !row.valid);
    }
}

TEST_CASE("label keys: an optional DNS-subdomain prefix, then a name like a value but never empty") {
    struct Row {
        std::string key;
        bool valid;
    };
    for (const auto& row : std::vector<Row>{
             {"provision/verdict", true},
             {"provision/attention.flash3", true},
             {"gpu.example.com/gpu.count", true},
             {"feature.node.kubernetes.io/provision.verdict", true},
             {"x.profile.node.kubernetes.io/verdict", true},
             {"verdict", true},
             {"provision/", false},
             {"/verdict", false},
             {"Provision/verdict", false},      // a prefix is lowercase
             {"pro_vision/verdict", false},     // no '_' in DNS names
             {"provision./verdict", false},     // empty part
             {"-provision/verdict", false},
             {"kubernetes.io/verdict", false},  // reserved for Kubernetes
             {"node.kubernetes.io/verdict", false},
             {"k8s.io/verdict", false},
             {"provision/" + std::string(63, 'n'), true},
             {"provision/" + std::string(64, 'n'), false},
         }) {
        INFO(row.key);
        CHECK(label_key_problem(row.key).has_value() == !row.valid);
    }
    // 253 characters of DNS subdomain are allowed, 254 are not.
    std::string prefix;
    while (prefix.size() + 10 < 253) prefix += "abcdefghi.";
    prefix += std::string(253 - prefix.size(), 'z');
    REQUIRE(prefix.size() == 253);
    CHECK_FALSE(label_prefix_problem(prefix).has_value());
    CHECK(label_prefix_problem(prefix + "z").has_value());
}

TEST_CASE("a GPU's name becomes a product value as GPU Feature Discovery writes it") {
    CHECK(gpu_product_value("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3");
    CHECK(gpu_product_value("  Tesla T4 ") == "Tesla-T4");
    CHECK(label_value_problem(gpu_product_value("NVIDIA GeForce RTX 5090")) == std::nullopt);
    CHECK(label_value_problem(gpu_product_value("H100 'it''s'")).has_value());
}

TEST_CASE("the built-in [node_labels] prefix is the documented default, and valid") {
    const RecipeSet recipes = load_recipes_over_builtins(std::nullopt, {});
    CHECK(recipes.node_labels.prefix == kDefaultLabelPrefix);
    CHECK(node_label_prefix(&recipes) == kDefaultLabelPrefix);
    CHECK(node_label_prefix(nullptr) == kDefaultLabelPrefix);
    CHECK_FALSE(label_prefix_problem(kDefaultLabelPrefix).has_value());
}
