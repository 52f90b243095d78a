#include <catch2/catch.hpp>

#include <stdexcept>

#include "packages/python_packages.h"

using namespace provision;

namespace {

bool allows(const char* requirement, const char* version, PreReleases rule = PreReleases::allowed) {
    const auto parsed = Version::parse(version);
    INFO("version: " << version);
    REQUIRE(parsed);
    return Requirement::parse(requirement).allows(*parsed, rule);
}

}  // namespace

TEST_CASE("requirements parse into a normalised name and specifiers", "[packages]") {
    const Requirement r = Requirement::parse("Flash_Attn>=2.6.3,<3");
    CHECK(r.name == "flash-attn");
    REQUIRE(r.specifiers.size() == 2);
    CHECK(r.specifiers[0].first == ">=");
    CHECK(r.specifiers[0].second.str() == "2.6.3");
    CHECK(r.specifiers[1].first == "<");
    CHECK(r.specifiers[1].second.str() == "3");
    CHECK(r.str() == "flash-attn>=2.6.3,<3");

    CHECK(Requirement::parse("triton").specifiers.empty());
    CHECK(Requirement::parse("triton").str() == "triton");
    CHECK(Requirement::parse("  torch ( >= 2.0 , != 2.1.0 ) ").str() == "torch>=2.0,!=2.1.0");
    CHECK(Requirement::parse("xformers[Triton, dev]==0.0.32.*").str() == "xformers[triton,dev]==0.0.32.*");
    CHECK(Requirement::parse("sageattention~=2.1").specifiers[0].first == "~=");
    CHECK(Requirement::parse("torch==2.6.0+CU126").str() == "torch==2.6.0+cu126");
    CHECK(Requirement::parse("torch ==v2.6").str() == "torch==2.6");
}

TEST_CASE("malformed requirements are refused with a message that says why", "[packages]") {
    auto message = [](const char* text) {
        try {
            (void)Requirement::parse(text);
        } catch (const std::invalid_argument& error) {
            return std::string(error.what());
        }
        FAIL("accepted: " << text);
        return std::string();
    };
    using Catch::Matchers::Contains;
    CHECK_THAT(message(""), Contains("expected a package name"));
    CHECK_THAT(message(">=2.0"), Contains("expected a package name"));
    CHECK_THAT(message("-torch"), Contains("not a valid package name"));
    CHECK_THAT(message("torch>="), Contains("expected a version after '>='"));
    CHECK_THAT(message("torch 2.0"), Contains("expected a version operator"));
    CHECK_THAT(message("torch=2.0"), Contains("expected a version operator"));
    CHECK_THAT(message("torch>=2.0,"), Contains("expected a version specifier after ','"));
    CHECK_THAT(message("torch>=two"), Contains("'two' is not a PEP 440 version"));
    CHECK_THAT(message("torch~=2"), Contains("needs at least two release numbers"));
    CHECK_THAT(message("torch>=2.*"), Contains("only allowed after '==' or '!='"));
    CHECK_THAT(message("torch==2.0rc1.*"), Contains("only an epoch and release numbers"));
    CHECK_THAT(message("torch>=2.0+cu126"), Contains("local version"));
    CHECK_THAT(message("torch===2.0"), Contains("('===') is not supported"));
    CHECK_THAT(message("torch>=2.0; python_version > '3.8'"), Contains("environment markers"));
    CHECK_THAT(message("torch @ https://example.invalid/torch.whl"), Contains("URL requirements"));
    CHECK_THAT(message("torch (>=2.0"), Contains("expected ')'"));
    CHECK_THAT(message("torch[cuda"), Contains("expected ',' or ']'"));
    CHECK_THAT(message("torch>=2.0 extra"), Contains("unexpected 'extra'"));
    // The message names the whole requirement.
    CHECK_THAT(message("flash-attn>=x"), Contains("'flash-attn>=x'"));
}

TEST_CASE("comparison operators", "[packages]") {
    CHECK(allows("torch>=2.0", "2.0"));
    CHECK(allows("torch>=2.0", "2.11.0"));
    CHECK_FALSE(allows("torch>=2.0", "1.13.1"));
    CHECK(allows("torch<=2.0", "2.0.0"));
    CHECK_FALSE(allows("torch<=2.0", "2.0.1"));
    CHECK(allows("torch>2.0", "2.0.1"));
    CHECK_FALSE(allows("torch>2.0", "2.0"));
    CHECK(allows("torch<2.0", "1.13.1"));
    CHECK_FALSE(allows("torch<2.0", "2.0"));
    CHECK(allows("flash-attn>=2.6.3,<3", "2.8.3"));
    CHECK_FALSE(allows("flash-attn>=2.6.3,<3", "2.5.0"));
    CHECK_FALSE(allows("flash-attn>=2.6.3,<3", "3.0.0"));
    CHECK(allows("triton", "3.6.0"));
    // Local labels of the installed version never matter to ordered comparisons.
    CHECK(allows("torch>=2.6", "2.6.0+cu126"));
    CHECK(allows("torch<=2.6", "2.6.0+cu126"));
}

TEST_CASE("== and != with padding, local labels and prefixes", "[packages]") {
    CHECK(allows("torch==2.0", "2.0.0"));
    CHECK(allows("torch==2.6.0", "2.6.0+cu126"));  // a public specifier ignores the candidate's label
    CHECK(allows("torch==2.6.0+cu126", "2.6.0+cu126"));
    CHECK_FALSE(allows("torch==2.6.0+cu126", "2.6.0+cu118"));  // a local specifier must match exactly
    CHECK_FALSE(allows("torch==2.6.0+cu126", "2.6.0"));
    CHECK(allows("torch!=2.6.0+cu126", "2.6.0+cu118"));
    CHECK_FALSE(allows("torch!=2.1.0", "2.1"));
    CHECK(allows("torch!=2.1.0", "2.1.1"));

    CHECK(allows("xformers==0.0.32.*", "0.0.32.post2"));
    CHECK(allows("xformers==0.0.32.*", "0.0.32"));
    CHECK_FALSE(allows("xformers==0.0.32.*", "0.0.33"));
    CHECK(allows("torch==2.*", "2.11.0"));
    CHECK_FALSE(allows("torch==2.1.*", "2.10"));
    CHECK(allows("torch==2.1.0.*", "2.1"));  // the candidate is padded with zeros
    CHECK(allows("torch==2.1.*", "2.1.0rc1"));
    CHECK_FALSE(allows("torch==2.*", "1!2.0"));  // epochs must be equal
    CHECK_FALSE(allows("torch!=2.1.*", "2.1.5"));
    CHECK(allows("torch!=2.1.*", "2.2"));
}

TEST_CASE("~= is >= the version and == its prefix", "[packages]") {
    CHECK(allows("sageattention~=2.1", "2.1"));
    CHECK(allows("sageattention~=2.1", "2.9.9"));
    CHECK_FALSE(allows("sageattention~=2.1", "3.0"));
    CHECK_FALSE(allows("sageattention~=2.1", "2.0.9"));
    CHECK(allows("flash-attn~=2.6.3", "2.6.9"));
    CHECK_FALSE(allows("flash-attn~=2.6.3", "2.7.0"));
    CHECK_FALSE(allows("flash-attn~=2.6.3", "2.6.2"));
    CHECK(allows("x~=2.2.post3", "2.3"));  // suffixes do not shorten the prefix
    CHECK_FALSE(allows("x~=2.2.post3", "2.2"));
    CHECK(allows("x~=1!2.2", "1!2.5"));
    CHECK_FALSE(allows("x~=1!2.2", "2.5"));
}

TEST_CASE("exclusive comparisons exclude pre- and post-releases of the same version", "[packages]") {
    CHECK_FALSE(allows("torch<3", "3.0rc1"));
    CHECK_FALSE(allows("torch<3", "3.0.dev1"));
    CHECK(allows("torch<3", "2.9rc1"));
    CHECK(allows("torch<3.0rc2", "3.0rc1"));  // unless the specifier names a pre-release itself
    CHECK_FALSE(allows("torch>1.7", "1.7.post1"));
    CHECK(allows("torch>1.7", "1.7.1"));
    CHECK(allows("torch>1.7.post1", "1.7.post2"));
}

TEST_CASE("pre-releases: installed ones count, the install-time rule is available", "[packages]") {
    // PEP 440 accepts pre-releases already present on the system: an
    // installed flash_attn_3 3.0.0b1 serves a plain "flash_attn_3".
    CHECK(allows("flash_attn_3", "3.0.0b1"));
    CHECK(allows("torch>=2.5", "2.6.0.dev20241001+cu124"));
    // An NVIDIA-style 2.5.0a0 build still sorts below 2.5.
    CHECK_FALSE(allows("torch>=2.5", "2.5.0a0+e000cf0ad9.nv24.10"));

    // Install-time rule: only when a specifier other than != names one.
    CHECK_FALSE(allows("flash_attn_3", "3.0.0b1", PreReleases::only_when_named));
    CHECK_FALSE(allows("torch>=2.5", "2.6.0.dev20241001", PreReleases::only_when_named));
    CHECK(allows("flash_attn_3>=3.0.0b1", "3.0.0b1", PreReleases::only_when_named));
    CHECK(allows("flash_attn_3>=3.0.0b1", "3.0.0rc2", PreReleases::only_when_named));
    CHECK(allows("torch<2.6.dev0", "2.5rc1", PreReleases::only_when_named));
    CHECK_FALSE(allows("torch!=3.0b1", "3.0b2", PreReleases::only_when_named));
    CHECK(allows("torch>=2.5", "2.6.0", PreReleases::only_when_named));

    CHECK(Requirement::parse("x>=1.0rc1").names_prerelease());
    CHECK_FALSE(Requirement::parse("x!=1.0rc1").names_prerelease());
    CHECK_FALSE(Requirement::parse("x>=1.0.post1").names_prerelease());
}
