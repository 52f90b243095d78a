// Settings from flags and environment variables: one parser per kind of
// value (durations, booleans), errors that name the flag or the variable the
// value came from, and the small cases of the command line ('--' alone, a
// COMMAND's own --version, an empty env file path).
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

std::vector<std::string> h100_args(const TempDir& dir) {
    return {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages", e2e::site_packages("all"),
            "--env-file",    dir.file(".env_settings")};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

}  // namespace

TEST_CASE("durations: NaN, infinity, out of range and values below a millisecond are usage errors naming their source") {
    TempDir dir;
    const std::vector<std::string> bad = {"nan", "inf", "-inf", "1e20", "1e-9", "0", "-1", "abc", "", "5s"};
    for (const char* variable : {"PROVISION_VALIDATE_TIMEOUT", "PROVISION_FETCH_TIMEOUT"}) {
        for (const auto& value : bad) {
            INFO(variable << "=" << value);
            const auto result = e2e::provision(h100_args(dir), {{variable, value}});
            CHECK(result.exit_code == 2);
            CHECK_THAT(result.err, Catch::Contains(fmt::format("{}={}:", variable, value)));
            CHECK_THAT(result.err, !Catch::Contains("--"));  // the variable was the source, not a flag
            CHECK(result.err.size() < 400);
        }
    }
    for (const char* flag : {"--validate-timeout", "--fetch-timeout"}) {
        for (const auto& value : bad) {
            INFO(flag << " " << value);
            const auto result = e2e::provision(with(h100_args(dir), {flag, value}));
            CHECK(result.exit_code == 2);
            CHECK_THAT(result.err, Catch::Contains(fmt::format("{}={}:", flag, value)));
        }
    }
    // No fixture: detection reads PROVISION_DETECT_TIMEOUT (and fails before it starts).
    for (const auto& value : bad) {
        INFO("PROVISION_DETECT_TIMEOUT=" << value);
        const auto result = e2e::provision({"--no-validate", "--env-file", dir.file(".env_settings")},
                                           {{"PROVISION_DETECT_TIMEOUT", value},
                                            {"PROVISION_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                                            {"PROVISION_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"}});
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(fmt::format("PROVISION_DETECT_TIMEOUT={}:", value)));
    }
    // A good value still works, from either source; the flag wins over the variable.
    CHECK(e2e::provision(with(h100_args(dir), {"--validate-timeout", "0.5"})).exit_code == 0);
    CHECK(e2e::provision(h100_args(dir), {{"PROVISION_FETCH_TIMEOUT", "2.5"}}).exit_code == 0);
    CHECK(e2e::provision(with(h100_args(dir), {"--fetch-timeout", "3"}), {{"PROVISION_FETCH_TIMEOUT", "nan"}})
              .exit_code == 0);
    reliability::record("settings input",
                        "durations nan, inf, 1e20, 1e-9, 0, -1, abc in PROVISION_{VALIDATE,FETCH,DETECT}_TIMEOUT and "
                        "their flags",
                        "exit 2 naming the variable or the flag that gave the value");
}

TEST_CASE("booleans: one parser for PROVISION_FORCE and PROVISION_ALLOW_HTTP") {
    TempDir dir;
    const std::vector<std::string> t4 = {"--gpu-fixture", e2e::gpu_fixture("t4"), "--site-packages",
                                         e2e::site_packages("all"), "--env-file", dir.file(".env_settings"),
                                         "--json"};
    for (const char* yes : {"1", "true", "TRUE", "yes", "on", " on "}) {
        INFO("PROVISION_FORCE=" << yes);
        const auto result = e2e::provision(t4, {{"PROVISION_ATTENTION", "flash3"}, {"PROVISION_FORCE", yes}});
        CHECK(result.exit_code == 0);
        CHECK(e2e::report(result)["verdict"] == "degraded");
    }
    for (const char* no : {"0", "false", "no", "off"}) {
        INFO("PROVISION_FORCE=" << no);
        CHECK(e2e::provision(t4, {{"PROVISION_ATTENTION", "flash3"}, {"PROVISION_FORCE", no}}).exit_code == 4);
    }
    for (const char* variable : {"PROVISION_FORCE", "PROVISION_ALLOW_HTTP"}) {
        const auto result = e2e::provision(t4, {{variable, "maybe"}});
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(fmt::format("{}=maybe: expected 1, true, yes, on or 0, false, no, off",
                                                           variable)));
    }
    reliability::record("settings input", "PROVISION_FORCE=true / PROVISION_ALLOW_HTTP=maybe",
                        "true, yes, on, 1 (and their opposites) read alike; anything else exit 2 naming the variable");
}

TEST_CASE("the command line's small cases") {
    TempDir dir;
    SECTION("'--' with nothing after it is a usage error") {
        const auto result = e2e::provision(with(h100_args(dir), {"--no-validate", "--"}));
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains("'--' must be followed by a COMMAND"));
        reliability::record("settings input", "'--' with no COMMAND after it", "exit 2");
    }
    SECTION("an empty env file path is a usage error from the flag and from the variable alike") {
        const auto from_flag = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--env-file", ""});
        CHECK(from_flag.exit_code == 2);
        CHECK_THAT(from_flag.err, Catch::Contains("--env-file is empty"));
        const auto from_variable = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100")},
                                                  {{"PROVISION_ENV_FILE", ""}});
        CHECK(from_variable.exit_code == 2);
        CHECK_THAT(from_variable.err, Catch::Contains("PROVISION_ENV_FILE is empty"));
        reliability::record("settings input", "PROVISION_ENV_FILE= (empty) and --env-file \"\"",
                            "exit 2 for both, naming the source; no file written");
    }
    SECTION("PROVISION_WORKLOAD is trimmed like PROVISION_ATTENTION") {
        const auto result = e2e::provision(with(h100_args(dir), {"--json"}), {{"PROVISION_WORKLOAD", " generic \n"}});
        INFO(result.err);
        CHECK(result.exit_code == 0);
        CHECK(e2e::report(result)["workload"] == "generic");
        reliability::record("settings input", "PROVISION_WORKLOAD with blanks around the name", "trimmed; exit 0");
    }
    SECTION("--no-validate wins over an invalid PROVISION_VALIDATE") {
        CHECK(e2e::provision(with(h100_args(dir), {"--no-validate"}), {{"PROVISION_VALIDATE", "bogus"}}).exit_code ==
              0);
        CHECK(e2e::provision(h100_args(dir), {{"PROVISION_VALIDATE", "bogus"}}).exit_code == 2);
        reliability::record("settings input", "--no-validate with PROVISION_VALIDATE=bogus",
                            "exit 0: the flag decides; the variable alone is exit 2");
    }
    SECTION("a COMMAND's own --version (given without '--') goes to the COMMAND") {
        const auto result = e2e::provision(
            with(h100_args(dir), {"--no-validate", "/bin/sh", "-c", "printf '%s\\n' \"$1\"", "sh", "--version"}));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        CHECK(result.out == "--version\n");
        const auto unknown = e2e::provision(with(h100_args(dir), {"--no-such-flag"}));
        CHECK(unknown.exit_code == 2);
        CHECK_THAT(unknown.err, Catch::Contains("--no-such-flag"));
        reliability::record("settings input", "provision ... COMMAND --version (no '--')",
                            "--version reaches the COMMAND; an unknown option before any COMMAND is exit 2");
    }
}

TEST_CASE("switches take no value: --json=false, --no-validate=false, --explain=no, --check=x are usage errors") {
    TempDir dir;
    for (const char* argument : {"--json=false", "--no-validate=false", "--explain=no", "--check=x", "--json=1"}) {
        INFO(argument);
        const auto result = e2e::provision(with(h100_args(dir), {argument}));
        CHECK(result.exit_code == 2);
        const std::string flag = std::string(argument).substr(0, std::string(argument).find('='));
        CHECK_THAT(result.err, Catch::Contains(std::string(argument) + ": " + flag + " is a switch and takes no value"));
        CHECK(result.out.empty());  // --json=false asks for no JSON, not for an error document
    }
    const auto alone = e2e::provision(with(h100_args(dir), {"--json", "--no-validate", "--explain"}));
    INFO(alone.err);
    CHECK(alone.exit_code == 0);
    CHECK(e2e::report(alone)["validation"]["status"] == "skipped");
    const auto help = e2e::provision({"--help"});
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("--json ") && Catch::Contains("--allow-http "));
    CHECK(help.out.find('{') == std::string::npos);  // no switch shows CLI11's recorded default
    CHECK(help.out.find('\0') == std::string::npos);
    reliability::record("settings input", "--json=false, --no-validate=false, --explain=no, --check=x, --json=1",
                        "exit 2 naming the flag as a switch that takes no value; alone each still works; --help "
                        "unchanged");
}

TEST_CASE("an empty --python or PROVISION_PYTHON is a usage error, as an empty --env-file is") {
    TempDir dir;
    const auto from_flag = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--env-file",
                                           dir.file("env"), "--python", ""});
    CHECK(from_flag.exit_code == 2);
    CHECK_THAT(from_flag.err, Catch::Contains("--python is empty"));
    const auto from_variable = e2e::provision(
        {"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--env-file", dir.file("env")},
        {{"PROVISION_PYTHON", ""}});
    CHECK(from_variable.exit_code == 2);
    CHECK_THAT(from_variable.err, Catch::Contains("PROVISION_PYTHON is empty"));
    const auto fixture = e2e::provision({"--gpu-fixture", "", "--no-validate", "--env-file", dir.file("env")});
    CHECK(fixture.exit_code == 2);
    CHECK_THAT(fixture.err, Catch::Contains("--gpu-fixture is empty"));
    CHECK_FALSE(std::filesystem::exists(dir.file("env")));
    reliability::record("settings input", "--python \"\", PROVISION_PYTHON= (empty), --gpu-fixture \"\"",
                        "exit 2 naming the flag or variable, as an empty --env-file; PATH's python is not used "
                        "instead; no file written");
}
