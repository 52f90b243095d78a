// What provision says, read for the truth: each message with its severity
// (error, warning, note) in the summary and the JSON report, the --json of a
// COMMAND left to the COMMAND, what turned validation off, a COMMAND path
// that does not exist, --help's usage line, the timings in time order.
#include <sys/stat.h>

#include <filesystem>
#include <regex>

#include <catch2/catch.hpp>

#include "harness.h"

using e2e::has;
using e2e::TempDir;

namespace {

std::vector<std::string> on_machine(const TempDir& dir, const std::string& machine) {
    return {"--gpu-fixture", e2e::gpu_fixture(machine), "--site-packages", e2e::site_packages("all"), "--env-file",
            dir.file(".env_settings")};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// The report's messages of one severity.
std::vector<std::string> messages(const nlohmann::json& report, const std::string& severity) {
    std::vector<std::string> texts;
    for (const auto& message : report["messages"])
        if (message["severity"] == severity) texts.push_back(message["text"]);
    return texts;
}

bool any_has(const std::vector<std::string>& texts, const std::string& part) {
    return std::any_of(texts.begin(), texts.end(), [&](const std::string& text) { return has(text, part); });
}

}  // namespace

TEST_CASE("a refused PROVISION_DTYPE is the run's error, a forced one a warning, never 'note: warning:'") {
    TempDir dir;
    const auto refused = e2e::provision(with(on_machine(dir, "t4"), {"--json"}), {{"PROVISION_DTYPE", "bfloat16"}});
    INFO(refused.err);
    CHECK(refused.exit_code == 4);
    CHECK(has(refused.err, "\n  error: PROVISION_DTYPE=bfloat16 cannot be served"));
    const auto report = e2e::report(refused);
    CHECK(any_has(messages(report, "error"), "PROVISION_DTYPE=bfloat16 cannot be served"));
    // The errors come first, and "warnings" keeps every text, as schema 1 has it.
    REQUIRE_FALSE(report["messages"].empty());
    CHECK(report["messages"][0]["severity"] == "error");
    CHECK(report["warnings"].size() == report["messages"].size());

    const auto forced = e2e::provision(with(on_machine(dir, "t4"), {"--json"}),
                                       {{"PROVISION_DTYPE", "bfloat16"}, {"PROVISION_FORCE", "1"}});
    INFO(forced.err);
    CHECK(forced.exit_code == 0);
    CHECK(has(forced.err, "\n  warning: PROVISION_DTYPE=bfloat16 is forced by PROVISION_FORCE=1"));
    CHECK_FALSE(has(forced.err, "note: warning:"));
    CHECK(any_has(messages(e2e::report(forced), "warning"), "PROVISION_DTYPE=bfloat16 is forced"));
}

TEST_CASE("the env file that could not be written is the error of a run without a COMMAND, a warning with one") {
    TempDir dir;
    e2e::write_file(dir.file("file"), "");
    const std::string inside_a_file = dir.file("file/env");
    auto args = on_machine(dir, "h100");
    args.back() = inside_a_file;  // --env-file
    const auto alone = e2e::provision(with(args, {"--json"}));
    INFO(alone.err);
    CHECK(alone.exit_code == 6);
    CHECK(std::regex_search(alone.err, std::regex("\n  error: [^\n]*file/env")));
    CHECK(any_has(messages(e2e::report(alone), "error"), "file/env"));

    const auto handoff = e2e::provision(with(args, {"--", "/bin/sh", "-c", "exit 0"}));
    INFO(handoff.err);
    CHECK(handoff.exit_code == 0);
    CHECK(std::regex_search(handoff.err, std::regex("\n  warning: [^\n]*file/env")));
}

TEST_CASE("a COMMAND's own --json leaves provision's errors in words") {
    TempDir dir;
    const auto commands = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("bad-syntax"), "sh", "-c", "echo hi",
                                          "--json"});
    CHECK(commands.exit_code == 3);
    CHECK(commands.out.empty());
    CHECK(has(commands.err, "provision: error: "));
    const auto after_dashes = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("bad-syntax"), "--", "tool", "--json"});
    CHECK(after_dashes.exit_code == 3);
    CHECK(after_dashes.out.empty());
    // provision's own --json, after a flag's value: the JSON error document.
    const auto own = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("bad-syntax"), "--json", "sh"});
    CHECK(own.exit_code == 3);
    CHECK(has(own.out, "\"exit_code\":3"));
}

TEST_CASE("validation turned off names what turned it off") {
    TempDir dir;
    const std::pair<std::vector<std::string>, std::map<std::string, std::string>> cases[] = {
        {{"--validate", "off"}, {}},
        {{"--validate=OFF"}, {}},
        {{"--no-validate"}, {}},
        {{}, {{"PROVISION_VALIDATE", "0"}}},
        {{}, {{"PROVISION_VALIDATE", "off"}}},
    };
    const char* expected[] = {"disabled (--validate off)", "disabled (--validate off)", "disabled (--no-validate)",
                              "disabled (PROVISION_VALIDATE=0)", "disabled (PROVISION_VALIDATE=off)"};
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        // A fixture's GPUs are never validated: only a machine without one tells "disabled" apart.
        const auto result = e2e::provision(with({"--gpu-fixture", e2e::gpu_fixture("cpu-only"), "--env-file",
                                                 dir.file(".env_settings"), "--json"},
                                                cases[i].first),
                                           cases[i].second);
        INFO(result.err);
        CHECK(result.exit_code == 0);
        CHECK(e2e::report(result)["validation"]["reason"] == expected[i]);
    }
}

TEST_CASE("a COMMAND named by a path that does not exist is no such file, not a PATH search") {
    TempDir dir;
    const auto result = e2e::provision(with(on_machine(dir, "h100"), {"--", "/nonexistent/cmd"}));
    CHECK(result.exit_code == 127);
    CHECK(has(result.err, "provision: error: /nonexistent/cmd: no such file\n"));
    CHECK_FALSE(has(result.err, "searched PATH"));
    const auto by_name = e2e::provision(with(on_machine(dir, "h100"), {"--", "no-such-command-anywhere"}));
    CHECK(by_name.exit_code == 127);
    CHECK(has(by_name.err, "no-such-command-anywhere: command not found (searched PATH="));
}

TEST_CASE("--help's usage line shows the COMMAND, and the variables of others are listed apart") {
    const auto help = e2e::provision({"--help"});
    CHECK(help.exit_code == 0);
    CHECK(has(help.out, "Usage: provision [OPTIONS] [-- COMMAND [ARG...]]\n"));
    const auto others = help.out.find("Variables of others");
    REQUIRE(others != std::string::npos);
    CHECK(help.out.find("NCCL_SOCKET_IFNAME", others) != std::string::npos);
    CHECK(help.out.find("[pyenv] ", others) != std::string::npos);
    CHECK(has(help.out, "7 a GPU other\nprocesses hold could not be opened"));
}

TEST_CASE("--explain's timings line is in time order") {
    TempDir dir;
    const auto result = e2e::provision(with(on_machine(dir, "h100"), {"--explain"}));
    REQUIRE(result.exit_code == 0);
    std::smatch line;
    REQUIRE(std::regex_search(result.err, line, std::regex("Timings \\(ms since start\\): ([^\n]*)")));
    const std::string phases = line[1];
    const std::regex phase("([a-z_]+) ([0-9.]+)");
    double previous = -1;
    int count = 0;
    for (auto it = std::sregex_iterator(phases.begin(), phases.end(), phase); it != std::sregex_iterator(); ++it) {
        const double ms = std::stod((*it)[2]);
        INFO(phases);
        CHECK(ms >= previous);
        previous = ms;
        ++count;
    }
    CHECK(count >= 4);
    CHECK(has(phases, "total"));
}
