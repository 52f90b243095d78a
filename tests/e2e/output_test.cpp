// What provision prints: JSON that any parser accepts whatever the input
// holds, a JSON error document for exits 2 and 3, a failed report write that
// is not a success, and a human summary that no GPU name, driver version or
// environment value can turn into terminal control or a forged log line.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

// A one-GPU machine whose name and driver version are given as TOML basic-string contents.
std::string fixture(const TempDir& dir, const std::string& name, const std::string& driver = "580.159.04") {
    const std::string path = dir.file("machine.toml");
    e2e::write_file(path, fmt::format("[driver]\nversion = \"{}\"\ncuda = \"13.0\"\n[[gpus]]\nname = \"{}\"\n"
                                      "compute_capability = \"9.0\"\nmemory_mib = 81559\n",
                                      driver, name));
    return path;
}

std::vector<std::string> args(const TempDir& dir, const std::string& machine) {
    return {"--gpu-fixture", machine, "--site-packages", e2e::site_packages("all"), "--no-validate",
            "--env-file",    dir.file(".env_settings"), "--json"};
}

}  // namespace

TEST_CASE("--json is valid JSON for characters outside the BMP and for invalid UTF-8 in the environment") {
    TempDir dir;
    // A kept env value with an emoji and a stray byte; a GPU name with an emoji.
    const auto result = e2e::provision(args(dir, fixture(dir, "NVIDIA H100 \\U0001F600")),
                                       {{"PYTORCH_CUDA_ALLOC_CONF", "x\xF0\x9F\x98\x80y\xFFz"}});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);  // nlohmann::json refuses \U escapes and invalid UTF-8
    CHECK(report["gpus"][0]["name"] == "NVIDIA H100 \xF0\x9F\x98\x80");
    CHECK(report["env"]["PYTORCH_CUDA_ALLOC_CONF"] == "x\xF0\x9F\x98\x80y\xEF\xBF\xBDz");
    CHECK(result.out.find("\\U") == std::string::npos);
    reliability::record("report output", "a character outside the BMP and an invalid UTF-8 byte in reported values",
                        "valid JSON: raw UTF-8, U+FFFD for the invalid byte");
}

TEST_CASE("--json on exits 2 and 3 prints a JSON error document") {
    TempDir dir;
    const auto usage = e2e::provision({"--json", "--validate", "sometimes"});
    CHECK(usage.exit_code == 2);
    const auto usage_report = e2e::report(usage);
    CHECK(usage_report["schema"] == 1);
    CHECK(usage_report["error"]["exit_code"] == 2);
    CHECK_THAT(usage_report["error"]["message"].get<std::string>(), Catch::Contains("--validate"));

    const std::string recipe = dir.file("bad.toml");
    e2e::write_file(recipe, "[mechanisms.flash2\n");
    const auto bad_recipe = e2e::provision(
        {"--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--recipe", recipe, "--env-file", dir.file("e")});
    CHECK(bad_recipe.exit_code == 3);
    CHECK(e2e::report(bad_recipe)["error"]["exit_code"] == 3);
    CHECK_THAT(e2e::report(bad_recipe)["error"]["message"].get<std::string>(), Catch::Contains(recipe + ":1:"));
    reliability::record("report output", "--json with a usage error (exit 2) or a malformed recipe (exit 3)",
                        "stdout holds {\"schema\":1,\"error\":{\"exit_code\":N,\"message\":...}}");
}

TEST_CASE("a report that cannot be written to stdout (/dev/full) is not a success") {
    TempDir dir;
    std::string command = "exec \"$0\"";
    for (const auto& arg : args(dir, e2e::gpu_fixture("h100"))) command += " '" + arg + "'";
    command += " >/dev/full";
    const auto result = e2e::run("/bin/sh", {"-c", command, PROVISION_BINARY});
    INFO(result.err);
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("cannot write the JSON report to stdout"));
    reliability::record("report output", "--json with stdout on /dev/full (ENOSPC)", "exit 6 naming stdout");
}

TEST_CASE("control characters from a GPU name or a driver version are escaped in the summary") {
    TempDir dir;
    const auto result = e2e::provision(
        args(dir, fixture(dir, "GPU\\u001b[31mRED\\u001b]0;title\\u0007\\rFORGED", "580\\u0000.1")));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.err.find('\x1b') == std::string::npos);
    CHECK(result.err.find('\r') == std::string::npos);
    CHECK(result.err.find('\a') == std::string::npos);
    CHECK_THAT(result.err, Catch::Contains("GPU\\x1b[31mRED\\x1b]0;title\\x07\\x0dFORGED"));
    CHECK_THAT(result.err, Catch::Contains("580\\x00.1"));
    CHECK_THAT(result.err, Catch::Contains("Verdict"));  // the NUL did not cut the summary short
    reliability::record("report output", "ESC, OSC, BEL, CR in a GPU name; NUL in a driver version",
                        "escaped as \\xNN in the summary; the summary is whole");
}

TEST_CASE("a 120 KB PROVISION_ATTENTION with a newline is cut short in the message and cannot forge a line") {
    TempDir dir;
    // 120 KB: one environment string may hold at most 128 KiB (MAX_ARG_STRLEN).
    const std::string value = "bogus\nprovision: FORGED LINE" + std::string(120 * 1024, 'a');
    const auto result = e2e::provision(args(dir, e2e::gpu_fixture("h100")), {{"PROVISION_ATTENTION", value}});
    CHECK(result.exit_code == 2);
    CHECK(result.err.size() < 2048);
    CHECK(result.err.find("\nprovision: FORGED") == std::string::npos);
    CHECK_THAT(result.err, Catch::Contains("bogus\\x0aprovision: FORGED LINE"));
    reliability::record("override input", "a 120 KB PROVISION_ATTENTION holding a newline",
                        "exit 2; the value cut to 64 bytes with its size, the newline escaped");
}

TEST_CASE("site-packages trouble is reported: an unreadable folder, a package installed twice") {
    TempDir dir;
    // A regular file given as a folder cannot be read (as root too).
    const std::string not_a_folder = dir.file("site-packages-file");
    e2e::write_file(not_a_folder, "");
    const std::string second = dir.file("second");
    std::filesystem::create_directories(second + "/torch-2.4.1.dist-info");
    e2e::write_file(second + "/torch-2.4.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\n\n");
    const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                        e2e::site_packages("all"), "--site-packages", second, "--site-packages",
                                        not_a_folder, "--no-validate", "--env-file", dir.file(".env_settings")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("site-packages folder " + not_a_folder + " cannot be read: Not a directory"));
    CHECK_THAT(result.err, Catch::Contains("torch is installed more than once: 2.11.0 at") &&
                               Catch::Contains("2.4.1 at " + second + "/torch-2.4.1.dist-info does not"));
    reliability::record("packages", "a site-packages folder that cannot be read; one package in two folders",
                        "a note for each: the folder and why; both versions and which one counts");
}

TEST_CASE("a script whose #! interpreter is missing: 'bad interpreter', exit 126") {
    TempDir dir;
    const std::string script = dir.file("script");
    e2e::write_file(script, "#!/nonexistent/interpreter -x\necho never\n");
    ::chmod(script.c_str(), 0755);
    const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                        e2e::site_packages("all"), "--no-validate", "--env-file",
                                        dir.file(".env_settings"), "--", script});
    CHECK(result.exit_code == 126);
    CHECK_THAT(result.err, Catch::Contains(script + ": bad interpreter: /nonexistent/interpreter: No such file"));
    reliability::record("handoff", "COMMAND is a script whose #! names a missing interpreter",
                        "exit 126 saying 'bad interpreter' and naming it");
}

TEST_CASE("a stdout whose reader has gone is a report that cannot be written, not a death by SIGPIPE") {
    TempDir dir;
    e2e::RunOptions broken;
    broken.broken_stdout = true;
    auto with_metrics = args(dir, e2e::gpu_fixture("h100"));
    with_metrics.insert(with_metrics.end(), {"--metrics", dir.file("provision.prom")});
    // Without a COMMAND: exit 6, as for a full or closed stdout.
    const auto alone = e2e::run(PROVISION_BINARY, with_metrics, {}, broken);
    INFO(alone.err);
    CHECK(alone.exit_code == 6);
    CHECK_THAT(alone.err, Catch::Contains("error: cannot write the JSON report to stdout: Broken pipe"));
    CHECK_THAT(e2e::read_file(dir.file("provision.prom")), Catch::Contains("\nprovision_exit_code 6\n"));
    // With a COMMAND: a warning, and the workload starts, with SIGPIPE's
    // default disposition (an ignored one would survive exec): its own
    // write to the broken stdout ends it by SIGPIPE, as if started directly.
    auto handoff_args = with_metrics;
    handoff_args.insert(handoff_args.end(), {"--", "/bin/sh", "-c",
                                             "grep '^SigIgn:' /proc/self/status >&2; echo started >&2; exec echo hello"});
    const auto handoff = e2e::run(PROVISION_BINARY, handoff_args, {}, broken);
    INFO(handoff.err);
    CHECK_THAT(handoff.err, Catch::Contains("warning: cannot write the JSON report to stdout: Broken pipe"));
    CHECK_THAT(handoff.err, Catch::Contains("started"));
    const auto ignored_at = handoff.err.find("SigIgn:");
    REQUIRE(ignored_at != std::string::npos);
    const unsigned long long ignored = std::stoull(handoff.err.substr(ignored_at + 7), nullptr, 16);
    CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
    CHECK(handoff.exit_code == 128 + SIGPIPE);
    reliability::record("report output", "--json with stdout a pipe whose reader has gone; with and without a COMMAND",
                        "no death by SIGPIPE: exit 6 (metrics say 6); with a COMMAND a warning and the workload "
                        "starts, with SIGPIPE's default disposition");
}
