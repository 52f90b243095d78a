#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "packages/python_packages.h"

using namespace provision;

namespace {

Version v(const char* text) {
    const auto parsed = Version::parse(text);
    INFO("version: " << text);
    REQUIRE(parsed);
    return *parsed;
}

}  // namespace

TEST_CASE("package names are normalised as PEP 503 says", "[packages]") {
    CHECK(normalize_package_name("flash-attn") == "flash-attn");
    CHECK(normalize_package_name("flash_attn") == "flash-attn");
    CHECK(normalize_package_name("Flash.Attn") == "flash-attn");
    CHECK(normalize_package_name("FLASH__-..attn") == "flash-attn");
    CHECK(normalize_package_name("flash_attn_3") == "flash-attn-3");
    CHECK(normalize_package_name("SageAttention") == "sageattention");
    CHECK(normalize_package_name("") == "");
    CHECK(normalize_package_name("torch") == normalize_package_name("Torch"));
    CHECK(normalize_package_name("flash-attn") != normalize_package_name("flashattn"));
}

TEST_CASE("package names are validated as PEP 508 says", "[packages]") {
    CHECK(is_valid_package_name("flash_attn_3"));
    CHECK(is_valid_package_name("a"));
    CHECK(is_valid_package_name("zope.interface"));
    CHECK_FALSE(is_valid_package_name(""));
    CHECK_FALSE(is_valid_package_name("-torch"));
    CHECK_FALSE(is_valid_package_name("torch."));
    CHECK_FALSE(is_valid_package_name("to rch"));
    CHECK_FALSE(is_valid_package_name("torch!"));
}

TEST_CASE("versions are written in their canonical PEP 440 form", "[packages]") {
    const std::vector<std::pair<const char*, const char*>> cases = {
        {"2.11.0", "2.11.0"},
        {"v1.0", "1.0"},
        {"  1.0\n", "1.0"},
        {"01.002.0003", "1.2.3"},
        {"1.0ALPHA1", "1.0a1"},
        {"1.0-alpha.1", "1.0a1"},
        {"1.0.beta_2", "1.0b2"},
        {"1.0c1", "1.0rc1"},
        {"1.0pre1", "1.0rc1"},
        {"1.0preview1", "1.0rc1"},
        {"1.0a", "1.0a0"},
        {"1.0-1", "1.0.post1"},
        {"1.0-r", "1.0.post0"},
        {"1.0rev3", "1.0.post3"},
        {"1.0_post_4", "1.0.post4"},
        {"1.0-dev", "1.0.dev0"},
        {"1.0rc1-1.dev2", "1.0rc1.post1.dev2"},
        {"1!2.0", "1!2.0"},
        {"0!2.0", "2.0"},
        {"2.6.0+CU126", "2.6.0+cu126"},
        {"1.0+ubuntu-1_02", "1.0+ubuntu.1.2"},
        {"0.0.32.post2", "0.0.32.post2"},
        {"3.0.0b1", "3.0.0b1"},
        {"123456789012345678901234567890.1", "123456789012345678901234567890.1"},
    };
    for (const auto& [text, canonical] : cases) {
        INFO("version: " << text);
        const auto parsed = Version::parse(text);
        REQUIRE(parsed);
        CHECK(parsed->str() == canonical);
    }
}

TEST_CASE("strings that are not PEP 440 versions are refused", "[packages]") {
    for (const char* text : {"", " ", "v", "abc", "1.", ".1", "1..0", "1.0-", "1.0+", "1.0+a..b", "1.0+a+b", "1!",
                             "!1.0", "1.0.x", "1.0 beta", "1.0-final", "0.0.32-post2 (custom build)", "1.0a1b2",
                             "1.0.post1.post2", "1.0.dev1.dev2", "1.0dev1a1", "1.0+ü", "١.0"}) {
        INFO("text: '" << text << "'");
        CHECK_FALSE(Version::parse(text));
    }
}

TEST_CASE("versions order as PEP 440 says", "[packages]") {
    const std::vector<const char*> ascending = {
        "0.9",      "1.0.dev0", "1.0.dev1", "1.0a1.dev1", "1.0a1",      "1.0a1.post1.dev1", "1.0a1.post1", "1.0a2",
        "1.0b2",    "1.0rc1",   "1.0",      "1.0.post1.dev1", "1.0.post1", "1.0.post2",     "1.0.1",       "1.1.dev1",
        "1.1",      "1.10",     "2.0",      "10.0",       "1!0.1",      "1!1.0",
    };
    for (std::size_t i = 0; i + 1 < ascending.size(); ++i) {
        INFO(ascending[i] << " < " << ascending[i + 1]);
        CHECK(v(ascending[i]) < v(ascending[i + 1]));
        CHECK(v(ascending[i + 1]) > v(ascending[i]));
        CHECK(v(ascending[i]) != v(ascending[i + 1]));
    }
    // Sorting a shuffled copy gives the list back: the order is total.
    std::vector<Version> shuffled;
    for (const char* text : ascending) shuffled.push_back(v(text));
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(42));
    std::sort(shuffled.begin(), shuffled.end());
    for (std::size_t i = 0; i < ascending.size(); ++i) CHECK(shuffled[i].str() == ascending[i]);
}

TEST_CASE("equal versions: padding, spellings, leading zeros and local parts", "[packages]") {
    CHECK(v("1.0") == v("1.0.0"));
    CHECK(v("1") == v("1.0.0.0"));
    CHECK(v("1.0.0") == v("1"));
    CHECK(v("1.01") == v("1.1"));
    CHECK(v("1.0alpha1") == v("1.0a1"));
    CHECK(v("1.0-1") == v("1.0.post1"));
    CHECK(v("0!1.0") == v("1.0"));
    // The local part is ignored for comparison, but kept in the spelling.
    CHECK(v("2.6.0+cu126") == v("2.6.0"));
    CHECK(v("2.6.0+cu126") == v("2.6.0+cu118"));
    CHECK(v("2.6.0+cu126").str() == "2.6.0+cu126");
    CHECK(v("2.6.0+cu126").local() == "cu126");
    CHECK_FALSE(v("2.6.0").has_local());
    CHECK((v("1.0") <=> v("1.0.0")) == std::strong_ordering::equal);
}

TEST_CASE("numbers longer than any integer type compare by value", "[packages]") {
    CHECK(v("99999999999999999999999") < v("100000000000000000000000"));
    CHECK(v("1.000000000000000000000000000001") == v("1.1"));
    CHECK(v("20240101") > v("2024.1"));
}

TEST_CASE("epochs dominate the release", "[packages]") {
    CHECK(v("1!1.0") > v("2024.12"));
    CHECK(v("2!0") > v("1!99"));
    CHECK(v("1!1.0").str() == "1!1.0");
}

TEST_CASE("pre-, post-release and prefix helpers", "[packages]") {
    CHECK(v("1.0a1").is_prerelease());
    CHECK(v("1.0.dev3").is_prerelease());
    CHECK(v("1.0.post1.dev1").is_prerelease());
    CHECK_FALSE(v("1.0.post1").is_prerelease());
    CHECK(v("1.0.post1").is_postrelease());
    CHECK(v("1!2.0rc1.post3+x").base().str() == "1!2.0");
    CHECK(v("2.6.3").release_prefix(2).str() == "2.6");
    CHECK(v("2.6.3").release_size() == 3);
    CHECK(v("2.6.post1").matches_prefix(v("2.6")));
    CHECK(v("2").matches_prefix(v("2.0.0")));
    CHECK_FALSE(v("2.60").matches_prefix(v("2.6")));
    CHECK_FALSE(v("1!2.6").matches_prefix(v("2.6")));
}

TEST_CASE("the canonical spelling parses back to the same version", "[packages]") {
    for (const char* text : {"V1.0-ALPHA.1-r.DEV", "01!02.0c+Ubuntu_1", "1.0_rev_", "3.0.0b1", "1.0a.", "1.0-1"}) {
        INFO("text: " << text);
        const Version first = v(text);
        const auto again = Version::parse(first.str());
        REQUIRE(again);
        CHECK(*again == first);
        CHECK(again->str() == first.str());
    }
}
