#include <catch2/catch.hpp>

#include "core/error.h"
#include "recipe/recipe_loader.h"
#include "recipe/toml_reader.h"
#include "test_support.h"

using namespace provision;
using test_support::TempDir;
using test_support::write_file;

namespace {

const std::string kBuiltin = test_support::source_path("recipes");

using test_support::recipe_load_error;

}  // namespace

TEST_CASE("the built-in recipes load and hold every mechanism, architecture and the generic workload") {
    const RecipeSet recipes = load_recipes({kBuiltin});
    for (const char* name : {"flash3", "flash2", "sage", "xformers", "sdpa", "flex", "eager"})
        CHECK(recipes.mechanisms.count(name) == 1);
    for (const char* name : {"blackwell", "hopper", "ada", "ampere", "turing", "volta", "pascal", "maxwell", "older"})
        CHECK(recipes.architecture(name) != nullptr);
    REQUIRE(recipes.workloads.count("generic") == 1);
    CHECK(recipes.workloads.at("generic").gpu_env.at("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
    CHECK_FALSE(recipes.site_packages.empty());
}

TEST_CASE("mechanism aliases resolve case-insensitively to canonical names") {
    const RecipeSet recipes = load_recipes({kBuiltin});
    CHECK(recipes.canonical_mechanism("flash") == "flash2");
    CHECK(recipes.canonical_mechanism("FLASH_ATTENTION_2") == "flash2");
    CHECK(recipes.canonical_mechanism("fa3") == "flash3");
    CHECK(recipes.canonical_mechanism("flash_attention_3") == "flash3");
    CHECK(recipes.canonical_mechanism("Torch") == "sdpa");
    CHECK(recipes.canonical_mechanism("pytorch") == "sdpa");
    CHECK(recipes.canonical_mechanism("math") == "eager");
    CHECK(recipes.canonical_mechanism("manual") == "eager");
    CHECK(recipes.canonical_mechanism("SageAttention") == "sage");
    CHECK(recipes.canonical_mechanism("flex_attention") == "flex");
    CHECK_FALSE(recipes.canonical_mechanism("flash4").has_value());
}

TEST_CASE("a TOML syntax error names the file, line and column") {
    TempDir dir;
    write_file(dir.file("bad.toml"), "[mechanisms.x]\ndescription = \"unterminated\n");
    ExitCode code{};
    const std::string message = recipe_load_error({kBuiltin, dir.file("bad.toml")}, &code);
    CHECK(code == ExitCode::invalid_input);
    CHECK_THAT(message, Catch::Contains(dir.file("bad.toml") + ":2:"));
}

TEST_CASE("an unknown key is an error that suggests the closest known key, at its position") {
    TempDir dir;
    write_file(dir.file("typo.toml"), "[mechanisms.flash2]\nmin_compute_capabilty = \"8.0\"\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("typo.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("typo.toml") + ":2:1"));
    CHECK_THAT(message, Catch::Contains("unknown key 'min_compute_capabilty'"));
    CHECK_THAT(message, Catch::Contains("did you mean 'min_compute_capability'?"));
}

TEST_CASE("a wrong type names where it is") {
    TempDir dir;
    write_file(dir.file("type.toml"), "[workloads.generic]\noverride_variables = \"ONE\"\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("type.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("type.toml") + ":2:"));
    CHECK_THAT(message, Catch::Contains("must be an array of strings"));
}

TEST_CASE("a bad compute capability is rejected") {
    TempDir dir;
    write_file(dir.file("cc.toml"), "[mechanisms.flash2]\nmin_compute_capability = \"eight\"\n");
    CHECK_THAT(recipe_load_error({kBuiltin, dir.file("cc.toml")}), Catch::Contains("compute capability like \"8.6\""));
}

TEST_CASE("an unknown mechanism in a preference list is an error with a suggestion") {
    TempDir dir;
    write_file(dir.file("order.toml"), "[workloads.generic.preference]\nhopper = [\"flash3\", \"flassh2\"]\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("order.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("order.toml") + ":2:"));
    CHECK_THAT(message, Catch::Contains("unknown mechanism 'flassh2'"));
    CHECK_THAT(message, Catch::Contains("did you mean 'flash2'?"));
}

TEST_CASE("an unknown architecture in a preference table is an error") {
    TempDir dir;
    write_file(dir.file("arch.toml"), "[workloads.generic.preference]\nhoper = [\"flash3\"]\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("arch.toml")});
    CHECK_THAT(message, Catch::Contains("unknown architecture 'hoper'"));
    CHECK_THAT(message, Catch::Contains("did you mean 'hopper'?"));
}

TEST_CASE("a bad package requirement is an error") {
    TempDir dir;
    write_file(dir.file("req.toml"), "[mechanisms.flash2]\npackages = [\"flash-attn>>2\"]\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("req.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("req.toml") + ":2:"));
    CHECK_THAT(message, Catch::Contains("bad package requirement"));
}

TEST_CASE("user recipes merge over the built-in ones without copying them") {
    TempDir dir;
    write_file(dir.file("user.toml"), R"(
[mechanisms.mykernel]
description = "an in-house attention kernel"
packages = ["my-kernel>=1.0"]
min_compute_capability = "8.0"

[workloads.generic.preference]
hopper = ["mykernel", "flash3", "eager"]

[workloads.generic.env]
MY_SETTING = "on"
)");
    const RecipeSet recipes = load_recipes({kBuiltin, dir.file("user.toml")});
    const auto& generic = recipes.workloads.at("generic");
    CHECK(recipes.mechanisms.count("mykernel") == 1);
    CHECK(recipes.mechanisms.at("flash3").checks == std::vector<std::string>{"attention.bf16.wgmma"});
    CHECK(generic.preference.at("hopper") == std::vector<std::string>{"mykernel", "flash3", "eager"});
    CHECK(generic.preference.at("ampere").front() == "flash2");  // untouched orders stay
    CHECK(generic.env.at("MY_SETTING") == "on");
    CHECK(generic.gpu_env.at("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
}

TEST_CASE("a recipe folder loads every .toml below it in path order") {
    TempDir dir;
    write_file(dir.file("a/1.toml"), "[workloads.generic.env]\nORDER = \"first\"\n");
    write_file(dir.file("b/2.toml"), "[workloads.generic.env]\nORDER = \"second\"\n");
    write_file(dir.file("b/ignored.txt"), "not toml");
    const RecipeSet recipes = load_recipes({kBuiltin, dir.path()});
    CHECK(recipes.workloads.at("generic").env.at("ORDER") == "second");
}

TEST_CASE("a missing recipe path is an error") {
    ExitCode code{};
    CHECK_THAT(recipe_load_error({kBuiltin, "/nonexistent/recipe.toml"}, &code), Catch::Contains("not found"));
    CHECK(code == ExitCode::invalid_input);
}

TEST_CASE("a character outside ASCII outside strings and comments is a positioned error; inside them it is fine",
          "[recipe]") {
    using provision::non_ascii_outside_strings;
    CHECK_FALSE(non_ascii_outside_strings("a = \"café ☕\" # naïve\nb = 'Ɩߑ'\n").has_value());
    CHECK_FALSE(non_ascii_outside_strings("a = \"\"\"x \"\" é\n\\\"\"\" ü\"\"\"\"\nb = '''ö''''\n").has_value());
    CHECK_FALSE(non_ascii_outside_strings("a = \"\\\"é\"\n").has_value());
    const auto at = non_ascii_outside_strings("[workloads.mine]\ndescriƖߑtop = \"x\"\n");
    REQUIRE(at.has_value());
    CHECK(at->first == 2);
    CHECK(at->second == 7);
    const auto after_multiline = non_ascii_outside_strings("a = \"\"\"\né\n\"\"\"\nb = é\n");
    REQUIRE(after_multiline.has_value());
    CHECK(after_multiline->first == 4);
    CHECK(after_multiline->second == 5);
    const auto after_backslash = non_ascii_outside_strings("a = \"\"\"\\  \n\n  é\"\"\"\n");
    REQUIRE(after_backslash.has_value());
    CHECK(after_backslash->first == 3);
    CHECK(after_backslash->second == 3);
    CHECK_FALSE(non_ascii_outside_strings("a = \"\"\"\\\n  x é\"\"\"\n").has_value());
    try {
        provision::parse_toml("x = 1\nkéy = 2\n", "mine.toml");
        FAIL("parse_toml accepted a non-ASCII bare key");
    } catch (const provision::Error& error) {
        CHECK(error.code() == provision::ExitCode::invalid_input);
        CHECK(std::string(error.what()).find("mine.toml:2:2:") == 0);
    }
}
