#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "check_catalog.h"
#include "recipe/recipe_loader.h"
#include "toml/toml_guard.h"
#include "toml/toml_reader.h"
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
    for (const char* name :
         {"flash4", "flash3", "flash2", "flashinfer", "cudnn", "sage", "xformers", "sdpa", "flex", "eager"})
        CHECK(recipes.mechanisms.count(name) == 1);
    for (const char* name : {"blackwell_datacenter", "blackwell_consumer", "hopper", "ada", "ampere", "turing", "volta",
                             "pascal", "maxwell", "older"})
        CHECK(recipes.architecture(name) != nullptr);
    CHECK(recipes.architecture("blackwell") == nullptr);  // a family, not an architecture
    CHECK(recipes.architecture("blackwell_consumer")->family_name() == "blackwell");
    CHECK(recipes.architecture("hopper")->family_name() == "hopper");
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
    CHECK(recipes.canonical_mechanism("fa4") == "flash4");
    CHECK_FALSE(recipes.canonical_mechanism("flash5").has_value());
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

TEST_CASE("the code points that break toml++ 3.3's whitespace test are exactly its three blocks", "[recipe]") {
    using provision::toml_whitespace_test_breaks_on;
    for (const char32_t safe : {0x20u, 0x7Fu, 0xA0u, 0x49Au, 0x1680u, 0x2000u, 0x2C5Du, 0x3000u, 0x3058u, 0xFB25u,
                                0xFEFFu, 0xFFFDu, 0x1F600u})
        CHECK_FALSE(toml_whitespace_test_breaks_on(safe));
    for (const char32_t broken : {0xA1u, 0xB2u, 0xE9u, 0x499u, 0x2C5Eu, 0x2FFFu, 0x3001u, 0x3057u, 0xFB26u, 0xFEFEu})
        CHECK(toml_whitespace_test_breaks_on(broken));
}

namespace {
std::string utf8_of(char32_t c) {
    if (c < 0x80) return std::string(1, static_cast<char>(c));
    if (c < 0x800) return {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
    if (c < 0x10000) return {char(0xE0 | (c >> 12)), char(0x80 | ((c >> 6) & 0x3F)), char(0x80 | (c & 0x3F))};
    return {char(0xF0 | (c >> 18)), char(0x80 | ((c >> 12) & 0x3F)), char(0x80 | ((c >> 6) & 0x3F)),
            char(0x80 | (c & 0x3F))};
}
}  // namespace

TEST_CASE("no code point that breaks toml++ reaches it, whatever the input", "[recipe]") {
    // Every Unicode scalar value: the guarded text never holds a breaking
    // code point, and restoring it gives back the input.
    std::size_t checked = 0, refused = 0;
    for (char32_t c = 1; c <= 0x10FFFF; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        const std::string utf8 = utf8_of(c);
        const auto guarded = provision::guard_toml_text(utf8);
        const auto* text = std::get_if<provision::GuardedText>(&guarded);
        if (!text) {
            ++refused;  // a raw stand-in
            continue;
        }
        ++checked;
        if (provision::toml_whitespace_test_breaks_on(c) && text->text == utf8)
            FAIL("U+" << std::hex << static_cast<unsigned>(c) << " reached toml++ unguarded");
        if (provision::restore_toml_text(text->text) != utf8)
            FAIL("U+" << std::hex << static_cast<unsigned>(c) << " was not restored");
    }
    CHECK(refused == 3019);  // one for each breaking code point
    CHECK(checked + refused == 0x10FFFF - 2048);
}

TEST_CASE("non-ASCII text reads back exactly where TOML allows it and is a positioned error elsewhere", "[recipe]") {
    const toml::table table = provision::parse_toml(
        "a = \"café ☕ 8192³ 4·B·H\" # naïve ²\nb = 'Ɩߑ'\n\"ключ é\" = \"\"\"\\\n  é ü\"\"\"\n[t]\n"
        "c = ['''ö''', \"\\u00E9\"]\n",
        "mine.toml");
    CHECK(table["a"].value<std::string>() == "café ☕ 8192³ 4·B·H");
    CHECK(table["b"].value<std::string>() == "Ɩߑ");
    CHECK(table["ключ é"].value<std::string>() == "é ü");
    CHECK(table["t"]["c"][0].value<std::string>() == "ö");
    CHECK(table["t"]["c"][1].value<std::string>() == "é");
    REQUIRE(table.get("ключ é") != nullptr);
    CHECK(table.get("ключ é")->source().begin.line == 3);

    const auto error_of = [](std::string_view text) {
        try {
            (void)provision::parse_toml(text, "mine.toml");
        } catch (const provision::Error& error) {
            CHECK(error.code() == provision::ExitCode::invalid_input);
            return std::string(error.what());
        }
        FAIL("parse_toml accepted " << text);
        return std::string();
    };
    CHECK_THAT(error_of("x = 1\nkéy = 2\n"), Catch::StartsWith("mine.toml:2:2:"));
    CHECK_THAT(error_of("[workloads.mine]\ndescriƖߑtop = \"x\"\n"), Catch::StartsWith("mine.toml:2:7:"));
    CHECK_THAT(error_of("a = \"\"\"\\é\"\"\"\n"), Catch::StartsWith("mine.toml:1:"));
    CHECK_THAT(error_of("a = 307nnn'nnnEEE\xC2\xBA" "EE\n"), Catch::StartsWith("mine.toml:1:"));
    CHECK_THAT(error_of("a = \"x\"\nb = \"\xC0\xAF\"\n"), Catch::StartsWith("mine.toml:2:6: byte 0xC0 is not UTF-8"));
    CHECK_THAT(error_of("a = \"\xED\xA0\x80\"\n"), Catch::StartsWith("mine.toml:1:6: byte 0xED is not UTF-8"));
    CHECK_THAT(error_of("a = \"\xF4\x80\x83\xA9\"\n"), Catch::Contains("private use"));
    CHECK_THAT(error_of("a = \"\\U001000E9\"\n"), Catch::StartsWith("mine.toml:1:6: the escape"));
    CHECK(provision::parse_toml("a = \"\\U0010FFFD\"\n", "mine.toml")["a"].value<std::string>() ==
          "\xF4\x8F\xBF\xBD");
}

TEST_CASE("[torch_builds]: rows load, and a bad row names where it is") {
    const RecipeSet set = load_recipes({kBuiltin});
    REQUIRE(set.torch_builds.count("cu128"));
    CHECK(set.torch_builds.at("cu128").index == "https://download.pytorch.org/whl/cu128");
    CHECK(set.torch_builds.at("cu128").sass.back() == ComputeCapability{12, 0});

    TempDir dir;
    write_file(dir.file("no-index.toml"), "[torch_builds.cu999]\ncuda = \"99.9\"\ntorch = \">=9\"\n");
    CHECK_THAT(recipe_load_error({kBuiltin, dir.file("no-index.toml")}), Catch::Contains("needs 'index'"));
    write_file(dir.file("bad-sass.toml"),
               "[torch_builds.cu999]\nindex = \"x\"\ncuda = \"99.9\"\ntorch = \">=9\"\nsass = [\"sm_90\"]\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("bad-sass.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("bad-sass.toml") + ":5:"));
    CHECK_THAT(message, Catch::Contains("\"sm_90\", which is not a compute capability"));
    write_file(dir.file("bad-torch.toml"), "[torch_builds.cu999]\nindex = \"x\"\ncuda = \"99.9\"\ntorch = \"two\"\n");
    CHECK_THAT(recipe_load_error({kBuiltin, dir.file("bad-torch.toml")}), Catch::Contains("'torch' of"));
}

TEST_CASE("packages_for names architectures, and an unknown one is an error") {
    const RecipeSet set = load_recipes({kBuiltin});
    REQUIRE(set.mechanisms.at("sage").packages_for.count("blackwell"));
    CHECK(set.mechanisms.at("sage").packages_for.at("blackwell").front().any_of.front() == "triton>=3.3");
    CHECK(set.mechanisms.at("flash2").assumed_max_compute_capability == ComputeCapability{9, 0});
    CHECK_FALSE(set.mechanisms.at("flash2").compute_capability.max.has_value());

    TempDir dir;
    write_file(dir.file("arch.toml"), "[mechanisms.flex]\npackages_for = { blackwel = [\"triton>=3.3\"] }\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("arch.toml")});
    CHECK_THAT(message, Catch::Contains("unknown architecture 'blackwel'"));
}

TEST_CASE("recipes/checks.toml describes exactly the bundled checks, with their capability ranges") {
    const RecipeSet set = load_recipes({kBuiltin});
    REQUIRE(set.checks.size() == kernels::check_table().size());
    for (const auto& entry : kernels::check_table()) {
        INFO(entry.name);
        REQUIRE(set.checks.count(entry.name) == 1);
        const CheckSpec& spec = set.checks.at(entry.name);
        REQUIRE(spec.compute_capability.min.has_value());
        CHECK(spec.compute_capability.min->major * 10 + spec.compute_capability.min->minor == entry.min_capability);
        const int max = spec.compute_capability.max
                            ? spec.compute_capability.max->major * 10 + spec.compute_capability.max->minor
                            : 1000;
        CHECK(max == entry.max_capability);
    }
}

TEST_CASE("a recipe describing a check provision does not carry is refused at load time") {
    TempDir dir;
    write_file(dir.file("check.toml"), "\n[checks.\"attention.fp8\"]\ndescription = \"fp8\"\n");
    const std::string message = recipe_load_error({kBuiltin, dir.file("check.toml")});
    CHECK_THAT(message, Catch::Contains(dir.file("check.toml") + ":2:"));
    CHECK_THAT(message, Catch::Contains("no check called 'attention.fp8'"));
    CHECK_THAT(message, Catch::Contains("gemm.tf32"));
}

TEST_CASE("number formats: dtype, package gates and dtype orders load from the recipes") {
    const RecipeSet set = load_recipes({kBuiltin});
    const FeatureSpec& fp8 = set.features.at("fp8");
    CHECK(fp8.number_format);
    CHECK(fp8.dtype.empty());
    CHECK(fp8.env_enabled.at("PROVISION_FP8") == "1");
    CHECK(fp8.env_disabled.at("PROVISION_FP8") == "0");
    REQUIRE(fp8.package_gates_for.count("ada") == 1);
    CHECK(fp8.package_gates_for.at("ada").front().any_of.front() == "torch>=2.3");
    CHECK(fp8.package_gates_on({"hopper"}).empty());
    CHECK(fp8.package_gates_on({"ada", "ada"}).size() == 1);
    CHECK(set.features.at("bf16").dtype == "bfloat16");
    CHECK(set.dtype_names() == std::vector<std::string>{"bfloat16", "float16", "float32"});
    CHECK(set.mechanisms.at("flex").dtype_preference.empty());
    CHECK(set.workloads.at("sglang").dtype_arguments.at("float16") == std::vector<std::string>{"--dtype=half"});
}

TEST_CASE("number-format keys are checked at load time with their positions") {
    TempDir dir;
    auto error_of = [&](const std::string& name, const std::string& text) {
        write_file(dir.file(name), text);
        return recipe_load_error({kBuiltin, dir.file(name)});
    };
    std::string message = error_of("dtype.toml", "[dtypes]\npreference = [\"bfloat16\", \"bf16\"]\n");
    CHECK_THAT(message, Catch::Contains(dir.file("dtype.toml") + ":2:"));
    CHECK_THAT(message, Catch::Contains("unknown dtype 'bf16' in 'preference' of [dtypes]"));
    CHECK_THAT(message, Catch::Contains("(known: bfloat16, float16, float32)"));

    message = error_of("flag.toml", "[features.fp8]\n\nnumber_format = \"yes\"\n");
    CHECK_THAT(message, Catch::Contains(dir.file("flag.toml") + ":3:"));
    CHECK_THAT(message, Catch::Contains("'number_format' of [features.fp8] must be true or false"));

    message = error_of("gate.toml", "[features.fp8]\npackage_gates_for = { adda = [\"torch>=2.3\"] }\n");
    CHECK_THAT(message, Catch::Contains("unknown architecture 'adda' in 'package_gates_for' of [features.fp8]"));

    message = error_of("gate2.toml", "[features.fp8]\npackage_gates = [\"torch>=>2\"]\n");
    CHECK_THAT(message, Catch::Contains("bad package requirement in [features.fp8]"));

    message = error_of("name.toml", "[features.x]\nnumber_format = true\ndtype = \"Bfloat 16\"\n");
    CHECK_THAT(message, Catch::Contains(dir.file("name.toml") + ":3:"));
    CHECK_THAT(message, Catch::Contains("must be a torch dtype name"));

    message = error_of("notformat.toml", "[features.x]\ndtype = \"float8\"\n");
    CHECK_THAT(message, Catch::Contains("names a dtype but is no number_format"));

    message = error_of("twice.toml", "[mechanisms.flex]\ndtype_preference = [\"float16\", \"float16\"]\n");
    CHECK_THAT(message, Catch::Contains("'float16' appears twice in 'dtype_preference' of [mechanisms.flex]"));

    message = error_of("workload.toml", "[workloads.generic.dtype_arguments]\nfloat8 = [\"--dtype=fp8\"]\n");
    CHECK_THAT(message, Catch::Contains("unknown dtype 'float8' in 'dtype_arguments' of [workloads.generic]"));

    message = error_of("key.toml", "[dtypes]\npreferences = [\"float32\"]\n");
    CHECK_THAT(message, Catch::Contains(dir.file("key.toml") + ":2:"));

    // A new format brings its dtype with it.
    write_file(dir.file("new.toml"), "[features.fp32x]\nnumber_format = true\ndtype = \"float64\"\n"
                                     "[dtypes]\npreference = [\"float64\", \"float32\"]\n");
    CHECK(load_recipes({kBuiltin, dir.file("new.toml")}).dtype_preference.front() == "float64");
}

TEST_CASE("Blackwell's two architectures share a family, which per-architecture keys may name") {
    const RecipeSet set = load_recipes({kBuiltin});
    CHECK(set.family_names() == std::vector<std::string>{"ada", "ampere", "blackwell", "hopper", "maxwell", "older",
                                                         "pascal", "rubin", "turing", "volta"});
    // ComfyUI orders the family once; the generic workload each architecture.
    CHECK(set.workloads.at("comfyui").preference.count("blackwell") == 1);
    CHECK(set.workloads.at("generic").preference.at("blackwell_datacenter").front() == "flash4");
    CHECK(set.workloads.at("generic").preference.at("blackwell_consumer").front() == "sage");
}

TEST_CASE("a later recipe's family order replaces the architectures' orders of earlier files") {
    TempDir dir;
    write_file(dir.file("site.toml"), "[workloads.generic.preference]\nblackwell = [\"sdpa\", \"eager\"]\n");
    const RecipeSet over = load_recipes({kBuiltin, dir.file("site.toml")});
    const auto& preference = over.workloads.at("generic").preference;
    CHECK(preference.count("blackwell_datacenter") == 0);
    CHECK(preference.count("blackwell_consumer") == 0);
    CHECK(preference.at("blackwell") == std::vector<std::string>{"sdpa", "eager"});
    CHECK(preference.at("hopper").front() == "flash3");  // other families keep theirs

    // Within one file the architecture's own order stays beside its family's.
    write_file(dir.file("both.toml"),
               "[workloads.generic.preference]\nblackwell = [\"sdpa\"]\nblackwell_consumer = [\"eager\"]\n");
    const RecipeSet both = load_recipes({kBuiltin, dir.file("both.toml")});
    CHECK(both.workloads.at("generic").preference.at("blackwell_consumer") == std::vector<std::string>{"eager"});
    CHECK(both.workloads.at("generic").preference.count("blackwell_datacenter") == 0);
}

TEST_CASE("a family must be a plain name and never another family's architecture") {
    TempDir dir;
    write_file(dir.file("name.toml"), "[architectures.x]\nfamily = \"Big Family\"\ncompute_capabilities = [\"13.0\"]\n");
    const std::string bad_name = recipe_load_error({kBuiltin, dir.file("name.toml")});
    CHECK_THAT(bad_name, Catch::Contains(dir.file("name.toml") + ":2:"));
    CHECK_THAT(bad_name, Catch::Contains("must be a name of lowercase letters"));

    write_file(dir.file("clash.toml"), "[architectures.x]\nfamily = \"hopper\"\ncompute_capabilities = [\"13.0\"]\n"
                                       "[architectures.hopper]\nfamily = \"other\"\n");
    CHECK_THAT(recipe_load_error({kBuiltin, dir.file("clash.toml")}),
               Catch::Contains("its family 'hopper' is the name of an architecture of family 'other'"));

    // An architecture may join a family of its own name, or an existing one.
    write_file(dir.file("join.toml"), "[architectures.rubin]\nfamily = \"blackwell\"\ncompute_capabilities = [\"10.7\"]\n");
    CHECK(load_recipes({kBuiltin, dir.file("join.toml")}).architecture("rubin")->family_name() == "blackwell");
}

TEST_CASE("the 2026 mechanism keys load, and a bad one names where it is") {
    const RecipeSet set = load_recipes({kBuiltin});
    const auto& flash4 = set.mechanisms.at("flash4");
    CHECK(flash4.min_driver_cuda == "12.9");
    CHECK(flash4.min_driver_cuda_with.at("nvidia-cutlass-dsl-libs-cu13") == "13.0");
    CHECK(flash4.compute_capability.str() == "compute capability 8.0 to 12.9");
    const auto& flashinfer = set.mechanisms.at("flashinfer");
    CHECK(flashinfer.same_versions.size() == 2);
    CHECK(flashinfer.same_versions.front() == std::pair<std::string, std::string>{"flashinfer-cubin", "flashinfer-python"});
    CHECK(flashinfer.packages_for.count("blackwell_datacenter") == 1);
    CHECK(set.mechanisms.at("cudnn").min_cudnn == "9.15.1");
    CHECK(set.canonical_mechanism("FA4") == "flash4");
    CHECK(set.canonical_mechanism("native_cudnn") == "cudnn");

    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"[mechanisms.m]\nmin_driver_cuda_with = { \"-bad-\" = \"13.0\" }\n", "which is not a package name"},
        {"[mechanisms.m]\nmin_driver_cuda_with = { torch = \"thirteen\" }\n", "must be a CUDA version like"},
        {"[mechanisms.m]\nsame_versions = [[\"a\", \"A\"]]\n", "pairs \"a\" with itself"},
        {"[mechanisms.m]\nsame_versions = [[\"a\"]]\n", "holds [package, package] pairs of two names"},
        {"[mechanisms.m]\nsame_versions = \"a\"\n", "must be an array of [package, package] pairs"},
        {"[mechanisms.m]\nmin_cudnn = \"nine\"\n", "'min_cudnn' of [mechanisms.m] must be a version"},
    };
    for (const auto& [text, expected] : bad) {
        INFO(text);
        write_file(dir.file("bad.toml"), text);
        const std::string message = recipe_load_error({kBuiltin, dir.file("bad.toml")});
        CHECK_THAT(message, Catch::Contains(dir.file("bad.toml") + ":2:"));
        CHECK_THAT(message, Catch::Contains(expected));
    }
}
