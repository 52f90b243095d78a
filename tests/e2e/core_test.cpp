// The bootstrapper end to end on simulated machines: selection per GPU
// family, overrides, bad input, the env file and the exec handoff.
#include <sys/stat.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

struct FakeGpu {
    std::string name;
    std::string cc;
};

// Writes a simulated machine (docs/DESIGN.md's fixture format) into `dir`.
std::string make_fixture(const TempDir& dir, const std::vector<FakeGpu>& gpus, const std::string& file = "machine.toml",
                         const std::string& cuda = "13.0") {
    std::string text;
    if (!gpus.empty()) text += fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"{}\"\n", cuda);
    int index = 0;
    for (const auto& gpu : gpus)
        text += fmt::format("\n[[gpus]]\nname = \"{}\"\ncompute_capability = \"{}\"\nmemory_mib = 24576\n"
                            "uuid = \"GPU-00000000-0000-0000-0000-00000000000{}\"\n",
                            gpu.name, gpu.cc, index++);
    const std::string path = dir.file(file);
    e2e::write_file(path, text);
    return path;
}

// The base of every run: a simulated machine, fake site-packages, an env
// file in the temporary folder.
std::vector<std::string> base_args(const TempDir& dir, const std::string& fixture, const std::string& packages) {
    return {"--gpu-fixture", fixture, "--site-packages", e2e::site_packages(packages), "--env-file",
            dir.file(".env_settings"), "--json"};
}

std::string selected(const e2e::Result& result) {
    INFO("stderr: " << result.err);
    REQUIRE(result.exit_code == 0);
    return e2e::report(result)["selected"]["mechanism"].get<std::string>();
}

}  // namespace

TEST_CASE("every GPU family gets the reference matrix's mechanism with all packages installed") {
    const std::vector<std::tuple<std::string, std::string, std::string, std::string>> rows = {
        {"NVIDIA B200", "10.0", "blackwell_datacenter", "sage"},
        {"NVIDIA GeForce RTX 5090", "12.0", "blackwell_consumer", "sage"},
        {"NVIDIA H100 80GB HBM3", "9.0", "hopper", "flash3"},
        {"NVIDIA L40S", "8.9", "ada", "flash2"},
        {"NVIDIA A100-SXM4-80GB", "8.0", "ampere", "flash2"},
        {"NVIDIA A10G", "8.6", "ampere", "flash2"},
        {"Tesla T4", "7.5", "turing", "xformers"},
        {"Tesla V100-SXM2-16GB", "7.0", "volta", "xformers"},
        {"Tesla P100-PCIE-16GB", "6.0", "pascal", "eager"},
        {"Tesla M40", "5.2", "maxwell", "eager"},
        {"Tesla K80", "3.7", "older", "eager"},
    };
    for (const auto& [name, cc, family, expected] : rows) {
        INFO(name);
        TempDir dir;
        const auto result = e2e::provision(base_args(dir, make_fixture(dir, {{name, cc}}), "all"));
        CHECK(selected(result) == expected);
        const auto report = e2e::report(result);
        CHECK(report["gpus"][0]["architecture"] == family);
        CHECK(report["gpus"][0]["compute_capability"] == cc);
        CHECK(report["validation"]["status"] == "skipped");
        CHECK(report["validation"]["reason"] == "simulated");
        CHECK(report["verdict"] == "ok");
    }
}

TEST_CASE("with only torch installed: sdpa on Volta and newer, eager below and on CPU") {
    for (const auto& [cc, expected] : std::vector<std::pair<std::string, std::string>>{
             {"12.0", "sdpa"}, {"9.0", "sdpa"}, {"8.6", "sdpa"}, {"7.5", "sdpa"}, {"7.0", "sdpa"},
             {"6.1", "eager"}, {"5.2", "eager"}}) {
        INFO(cc);
        TempDir dir;
        CHECK(selected(e2e::provision(base_args(dir, make_fixture(dir, {{"gpu", cc}}), "torch-only"))) == expected);
    }
    TempDir dir;
    CHECK(selected(e2e::provision(base_args(dir, make_fixture(dir, {}), "torch-only"))) == "eager");
}

TEST_CASE("a CPU-only machine selects eager and writes no CUDA allocator setting") {
    TempDir dir;
    const auto result = e2e::provision(base_args(dir, make_fixture(dir, {}), "all"));
    CHECK(selected(result) == "eager");
    const auto report = e2e::report(result);
    CHECK(report["gpus"].empty());
    CHECK(report["validation"]["reason"] == "no GPU");
    const auto env = e2e::source_env_file(dir.file(".env_settings"), {"PROVISION_ATTENTION", "PYTORCH_CUDA_ALLOC_CONF"});
    CHECK(env.at("PROVISION_ATTENTION") == "eager");
    CHECK(env.at("PYTORCH_CUDA_ALLOC_CONF").empty());
    CHECK_THAT(result.err, Catch::Contains("GPU Configuration Summary"));
    CHECK_THAT(result.err, Catch::Contains("Selected Mechanism:"));
}

TEST_CASE("mixed GPUs: a mechanism every visible GPU can serve; CUDA_VISIBLE_DEVICES narrows the set") {
    TempDir dir;
    const auto fixture = make_fixture(dir, {{"NVIDIA H100 80GB HBM3", "9.0"}, {"NVIDIA A100-SXM4-80GB", "8.0"}});
    CHECK(selected(e2e::provision(base_args(dir, fixture, "all"))) == "flash2");
    const auto only_h100 = e2e::provision(base_args(dir, fixture, "all"), {{"CUDA_VISIBLE_DEVICES", "0"}});
    CHECK(selected(only_h100) == "flash3");
    CHECK(e2e::report(only_h100)["gpus"].size() == 1);
}

TEST_CASE("the JSON report carries the schema's fields and the env file what it says") {
    TempDir dir;
    const auto result = e2e::provision(base_args(dir, make_fixture(dir, {{"NVIDIA H100 80GB HBM3", "9.0"}}), "all"));
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["schema"] == 1);
    CHECK(report["driver"]["version"] == "580.159.04");
    CHECK(report["driver"]["cuda"] == "13.0");
    CHECK(report["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3");
    CHECK(report["gpus"][0]["memory_mib"] == 24576);
    CHECK(report["workload"] == "generic");
    CHECK(report["selected"]["source"] == "auto");
    CHECK(report["candidates"][0]["mechanism"] == "flash3");
    CHECK(report["candidates"][0]["accepted"] == true);
    CHECK(report["env"]["PROVISION_ATTENTION"] == "flash3");
    CHECK(report["env"]["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True");
    CHECK(report["env"]["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] == "1");
    const auto env = e2e::source_env_file(dir.file(".env_settings"),
                                          {"PROVISION_ATTENTION", "PYTORCH_CUDA_ALLOC_CONF"});
    CHECK(env.at("PROVISION_ATTENTION") == "flash3");
    CHECK(env.at("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True");
    struct stat info {};
    REQUIRE(stat(dir.file(".env_settings").c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0644);
}

TEST_CASE("--explain lists every candidate with its reasons") {
    TempDir dir;
    auto args = base_args(dir, make_fixture(dir, {{"Tesla T4", "7.5"}}), "torch-only");
    args.push_back("--explain");
    const auto result = e2e::provision(args);
    REQUIRE(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("[rejected] xformers"));
    CHECK_THAT(result.err, Catch::Contains("needs xformers (not installed)"));
    CHECK_THAT(result.err, Catch::Contains("[accepted] sdpa"));
}

TEST_CASE("overrides from the environment") {
    TempDir dir;
    const auto h100 = make_fixture(dir, {{"NVIDIA H100 80GB HBM3", "9.0"}}, "h100.toml");
    const auto t4 = make_fixture(dir, {{"Tesla T4", "7.5"}}, "t4.toml");

    SECTION("served: an alias, any case") {
        const auto result = e2e::provision(base_args(dir, h100, "all"), {{"PROVISION_ATTENTION", "Flash_Attention_2"}});
        CHECK(selected(result) == "flash2");
        CHECK(e2e::report(result)["selected"]["source"] == "override");
    }
    SECTION("refused: exit 4 and the old env file stays") {
        e2e::write_file(dir.file(".env_settings"), "export OLD='1'\n");
        const auto result = e2e::provision(base_args(dir, t4, "all"), {{"PROVISION_ATTENTION", "flash3"}});
        CHECK(result.exit_code == 4);
        CHECK_THAT(result.err, Catch::Contains("PROVISION_FORCE=1"));
        CHECK(e2e::report(result)["verdict"] == "failed");
        CHECK(e2e::read_file(dir.file(".env_settings")) == "export OLD='1'\n");
        reliability::record("override input", "PROVISION_ATTENTION the GPU cannot serve (flash3 on a T4)", "exit 4 naming PROVISION_FORCE=1; the old env file stays");
    }
    SECTION("forced: proceeds with a warning") {
        const auto result = e2e::provision(base_args(dir, t4, "all"),
                                           {{"PROVISION_ATTENTION", "flash3"}, {"PROVISION_FORCE", "1"}});
        CHECK(selected(result) == "flash3");
        const auto report = e2e::report(result);
        CHECK(report["selected"]["source"] == "forced");
        CHECK(report["verdict"] == "degraded");
        CHECK_THAT(result.err, Catch::Contains("warning:"));
    }
    SECTION("unknown: exit 2 with the valid names") {
        const auto result = e2e::provision(base_args(dir, t4, "all"), {{"PROVISION_ATTENTION", "flash5"}});
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains("valid: cudnn, eager, flash2, flash3, flash4, flashinfer, flex, sage, "
                                               "sdpa, xformers, auto"));
        reliability::record("override input", "unknown mechanism name in PROVISION_ATTENTION (flash5)", "exit 2 listing the valid names");
    }
    SECTION("auto chooses") {
        CHECK(selected(e2e::provision(base_args(dir, t4, "all"), {{"PROVISION_ATTENTION", "auto"}})) == "xformers");
    }
}

TEST_CASE("bad input: malformed recipe and fixture exit 3 naming file, line and column") {
    TempDir dir;
    const auto fixture = make_fixture(dir, {{"NVIDIA H100 80GB HBM3", "9.0"}});
    e2e::write_file(dir.file("bad.toml"), "[workloads.generic.preference]\nhopper = [\"flash3\", \"flsh2\"]\n");
    auto args = base_args(dir, fixture, "all");
    args.insert(args.end(), {"--recipe", dir.file("bad.toml")});
    const auto result = e2e::provision(args);
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains(dir.file("bad.toml") + ":2:"));
    CHECK_THAT(result.err, Catch::Contains("did you mean 'flash2'?"));
    reliability::record("recipe input", "unknown mechanism in a recipe's preference list", "exit 3 naming file:line, suggesting the closest name");

    e2e::write_file(dir.file("broken-machine.toml"), "[[gpus]]\nname = \"x\"\ncompute_capability = 9.0\n");
    const auto bad_fixture = e2e::provision(base_args(dir, dir.file("broken-machine.toml"), "all"));
    CHECK(bad_fixture.exit_code == 3);
    CHECK_THAT(bad_fixture.err, Catch::Contains(dir.file("broken-machine.toml") + ":3:"));
    reliability::record("fixture input", "malformed GPU fixture (compute_capability not a string, no driver)", "exit 3 naming file:line");
}

TEST_CASE("usage errors exit 2; --help and --version exit 0") {
    CHECK(e2e::provision({"--no-such-flag"}).exit_code == 2);
    CHECK(e2e::provision({"--validate", "sometimes"}).exit_code == 2);
    const auto unknown_workload = e2e::provision({"--workload", "comfyu", "--gpu-fixture", "/dev/null"});
    CHECK(unknown_workload.exit_code == 2);
    const auto help = e2e::provision({"--help"});
    CHECK(help.exit_code == 0);
    for (const char* option : {"--check", "--explain", "--json", "--workload", "--recipe", "--env-file",
                               "--site-packages", "--gpu-fixture", "--no-validate", "--validate", "--node-labels",
                               "--metrics", "--repeat"})
        CHECK_THAT(help.out, Catch::Contains(option));
    const auto version = e2e::provision({"--version"});
    CHECK(version.exit_code == 0);
    CHECK_THAT(version.out, Catch::StartsWith("provision "));
}

TEST_CASE("a GPU name full of shell metacharacters: sourcing the env file executes nothing") {
    TempDir dir;
    const std::string marker = dir.file("pwned");
    const std::string evil = fmt::format("GPU'; touch {0}; echo '$(touch {0})`touch {0}`\\nexport X=1; touch {0}",
                                         marker);
    e2e::write_file(dir.file("evil.toml"),
                    fmt::format("[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n[[gpus]]\nname = \"{}\"\n"
                                "compute_capability = \"9.0\"\nmemory_mib = 81559\n",
                                evil));
    auto args = base_args(dir, dir.file("evil.toml"), "all");
    args.push_back("--");
    args.insert(args.end(), {"/bin/sh", "-c", ". \"$1\"; printf '%s' \"$PROVISION_ATTENTION\"", "sh",
                             dir.file(".env_settings")});
    const auto result = e2e::provision(args);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(marker));
    const auto env = e2e::source_env_file(dir.file(".env_settings"), {"PROVISION_ATTENTION", "X"});
    CHECK(env.at("PROVISION_ATTENTION") == "flash3");
    CHECK(env.at("X").empty());
    CHECK_FALSE(std::filesystem::exists(marker));
    reliability::record("env file", "GPU name full of shell metacharacters ('; $( ) ` newline export)", "exit 0; sourcing the env file runs nothing and sets only the settings");
}

TEST_CASE("an env file path that cannot be written: exit 6, clear message, nothing half-written") {
    TempDir dir;
    e2e::write_file(dir.file("a-file"), "not a folder\n");
    const auto fixture = make_fixture(dir, {{"NVIDIA H100 80GB HBM3", "9.0"}});
    auto args = base_args(dir, fixture, "all");
    args[5] = dir.file("a-file/sub/.env_settings");
    const auto result = e2e::provision(args);
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("cannot write the env file"));
    CHECK(e2e::read_file(dir.file("a-file")) == "not a folder\n");
    reliability::record("env file", "env file path below a regular file (cannot be created)", "exit 6 with a clear message; with a COMMAND, a warning and the workload starts");

    SECTION("with a command the workload still starts, with the settings in its environment") {
        args.insert(args.end(), {"--", "/bin/sh", "-c", "printf '%s' \"$PROVISION_ATTENTION\""});
        const auto handed = e2e::provision(args);
        CHECK(handed.exit_code == 0);
        CHECK_THAT(handed.out, Catch::EndsWith("flash3"));
        CHECK_THAT(handed.err, Catch::Contains("cannot write the env file"));
    }
}

TEST_CASE("--check writes no env file unless --env-file is given") {
    TempDir dir;
    const auto fixture = make_fixture(dir, {{"NVIDIA L40S", "8.9"}});
    const auto result = e2e::provision({"--check", "--gpu-fixture", fixture, "--site-packages",
                                        e2e::site_packages("all")});
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("Env file:           not written"));
    const auto with_file = e2e::provision({"--check", "--gpu-fixture", fixture, "--site-packages",
                                           e2e::site_packages("all"), "--env-file", dir.file("check.env")});
    CHECK(with_file.exit_code == 0);
    CHECK(std::filesystem::exists(dir.file("check.env")));
}

TEST_CASE("hand-off: exec keeps the PID, passes the exit status and the settings") {
    TempDir dir;
    const auto fixture = make_fixture(dir, {{"NVIDIA A100-SXM4-80GB", "8.0"}});
    auto args = base_args(dir, fixture, "all");
    args.pop_back();  // no --json: stdout is the workload's

    SECTION("same PID, settings in the environment") {
        auto run = args;
        run.insert(run.end(), {"--", "/bin/sh", "-c", "echo $$ $PROVISION_ATTENTION"});
        const auto result = e2e::provision(run);
        CHECK(result.exit_code == 0);
        CHECK(result.out == fmt::format("{} flash2\n", result.pid));
    }
    SECTION("the workload's exit status is provision's") {
        auto run = args;
        run.insert(run.end(), {"--", "/bin/sh", "-c", "exit 42"});
        CHECK(e2e::provision(run).exit_code == 42);
    }
    SECTION("a missing command: 127 with a clear message") {
        auto run = args;
        run.insert(run.end(), {"--", "no-such-command-anywhere"});
        const auto result = e2e::provision(run);
        CHECK(result.exit_code == 127);
        CHECK_THAT(result.err, Catch::Contains("no-such-command-anywhere: command not found"));
        reliability::record("hand-off", "COMMAND not found", "exit 127, 'command not found'");
    }
    SECTION("a file that cannot be executed: 126") {
        e2e::write_file(dir.file("not-executable"), "#!/bin/sh\n");
        auto run = args;
        run.insert(run.end(), {"--", dir.file("not-executable")});
        CHECK(e2e::provision(run).exit_code == 126);
        reliability::record("hand-off", "COMMAND not executable", "exit 126");
    }
    SECTION("the user's own allocator setting is kept") {
        auto run = args;
        run.insert(run.end(), {"--", "/bin/sh", "-c", "printf '%s' \"$PYTORCH_CUDA_ALLOC_CONF\""});
        const auto result = e2e::provision(run, {{"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}});
        CHECK(result.out == "max_split_size_mb:128");
    }
}
