// The workload's Python: provision reads the packages of the interpreter
// the workload will run, found in DESIGN.md's order, on fake trees.
#include <catch2/catch.hpp>

#include <filesystem>

#include <sys/stat.h>

#include <fmt/format.h>

#include "harness.h"

namespace {

namespace fs = std::filesystem;

// A stand-in interpreter: a script that does nothing, so a handoff to it succeeds.
std::string fake_interpreter(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    e2e::write_file(path, "#!/bin/sh\nexit 0\n");
    ::chmod(path.c_str(), 0755);
    return path;
}

std::string script(const std::string& path, const std::string& first_line) {
    fs::create_directories(fs::path(path).parent_path());
    e2e::write_file(path, first_line + "\nimport sys\n");
    ::chmod(path.c_str(), 0755);
    return path;
}

// One dist-info per "name==version" in `site`, which is created.
std::string packages(const std::string& site, const std::vector<std::string>& dists) {
    fs::create_directories(site);
    for (const auto& dist : dists) {
        const auto split = dist.find("==");
        const std::string name = dist.substr(0, split), version = dist.substr(split + 2);
        const std::string info = fmt::format("{}/{}-{}.dist-info", site, name, version);
        fs::create_directories(info);
        e2e::write_file(info + "/METADATA",
                        fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
    }
    return site;
}

// A venv at `root` for Python 3.12 holding `dists`; returns its bin/python3.
std::string venv(const std::string& root, const std::vector<std::string>& dists, bool system_site = false,
                 const std::string& home = "/nonexistent/bin") {
    packages(root + "/lib/python3.12/site-packages", dists);
    e2e::write_file(root + "/pyvenv.cfg",
                    fmt::format("home = {}\ninclude-system-site-packages = {}\nversion = 3.12.3\n", home,
                                system_site ? "true" : "false"));
    return fake_interpreter(root + "/bin/python3");
}

std::string site_of(const std::string& venv_root) { return venv_root + "/lib/python3.12/site-packages"; }

struct Run {
    e2e::Result result;
    nlohmann::json report;
};

// provision --json on the simulated H100, with exactly `environment`
// (PATH included) and `extra` options, then `command` when given.
Run run(const e2e::TempDir& dir, const std::map<std::string, std::string>& environment,
        const std::vector<std::string>& extra = {}, const std::vector<std::string>& command = {}) {
    std::vector<std::string> args{"--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate",
                                  "--env-file", dir.file(".env_settings")};
    args.insert(args.end(), extra.begin(), extra.end());
    if (!command.empty()) {
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
    }
    std::map<std::string, std::string> env = environment;
    if (!env.count("PATH")) env["PATH"] = dir.file("no-bin");
    if (!env.count("HOME")) env["HOME"] = dir.file("no-home");
    Run run;
    run.result = e2e::provision(args, env);
    INFO("stderr: " << run.result.err);
    run.report = e2e::report(run.result);
    return run;
}

std::string warnings_of(const nlohmann::json& report) {
    std::string text;
    for (const auto& warning : report["warnings"]) text += warning.get<std::string>() + "\n";
    return text;
}

const nlohmann::json& candidate(const nlohmann::json& report, const std::string& mechanism) {
    for (const auto& entry : report["candidates"])
        if (entry["mechanism"] == mechanism) return entry;
    throw std::runtime_error("no candidate " + mechanism);
}

}  // namespace

TEST_CASE("a venv interpreter given as the COMMAND is the one whose packages count", "[python]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("x/venv"), {"torch==2.11.0"});
    venv(dir.file("active"), {});  // an activated venv the COMMAND does not use
    const Run result = run(dir, {{"VIRTUAL_ENV", dir.file("active")}}, {}, {python, "app.py"});
    INFO(result.result.err);
    CHECK(result.result.exit_code == 0);
    const auto& reported = result.report["python"];
    CHECK(reported["executable"] == python);
    CHECK(reported["version"] == "3.12");
    CHECK(reported["environment"] == "venv");
    CHECK(reported["source"] == "command");
    CHECK(reported["site_packages"] == nlohmann::json::array({site_of(dir.file("x/venv"))}));
    CHECK(result.report["selected"]["mechanism"] == "sdpa");
    CHECK_THAT(result.result.err,
               Catch::Contains(fmt::format("Python:             {} (3.12, venv, the COMMAND's interpreter)", python)));
}

TEST_CASE("a console script's #! line leads to its venv", "[python]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("opt/venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    script(dir.file("opt/venv/bin/vllm"), "#!" + python);
    fake_interpreter(dir.file("usr/bin/python3"));  // python3 on PATH, first: not the one
    const Run result = run(dir, {{"PATH", dir.file("usr/bin") + ":" + dir.file("opt/venv/bin")}}, {},
                           {"vllm", "serve", "some/model"});
    CHECK(result.result.exit_code == 0);
    CHECK(result.report["python"]["executable"] == python);
    CHECK(result.report["python"]["source"] == "command");
    CHECK(result.report["selected"]["mechanism"] == "flash2");
}

TEST_CASE("#!/usr/bin/env python3 means the first python3 on the workload's PATH", "[python]") {
    e2e::TempDir dir;
    const std::string first = venv(dir.file("first"), {"torch==2.11.0"});
    venv(dir.file("second"), {"torch==2.11.0", "flash_attn==2.8.3"});
    const std::string app = script(dir.file("app/serve"), "#!/usr/bin/env python3");
    const Run result =
        run(dir, {{"PATH", dir.file("first/bin") + ":" + dir.file("second/bin")}}, {}, {app, "--port", "8000"});
    CHECK(result.result.exit_code == 0);
    CHECK(result.report["python"]["executable"] == first);
    CHECK(result.report["python"]["source"] == "command");
    CHECK(result.report["selected"]["mechanism"] == "sdpa");
}

TEST_CASE("VIRTUAL_ENV, CONDA_PREFIX and python3 on PATH without a COMMAND", "[python]") {
    e2e::TempDir dir;
    const std::string venv_python = venv(dir.file("venv"), {"torch==2.11.0"});

    SECTION("VIRTUAL_ENV") {
        fake_interpreter(dir.file("bin/python3"));
        const Run result = run(dir, {{"VIRTUAL_ENV", dir.file("venv")}, {"PATH", dir.file("bin")}});
        CHECK(result.report["python"]["executable"] == venv_python);
        CHECK(result.report["python"]["source"] == "VIRTUAL_ENV");
        CHECK(result.report["selected"]["mechanism"] == "sdpa");
    }
    SECTION("a conda prefix") {
        const std::string conda = dir.file("opt/conda");
        fake_interpreter(conda + "/bin/python3.11");
        fs::create_symlink("python3.11", conda + "/bin/python3");
        fs::create_directories(conda + "/conda-meta");
        packages(conda + "/lib/python3.11/site-packages", {"torch==2.11.0", "xformers==0.0.32"});
        const Run result = run(dir, {{"CONDA_PREFIX", conda}, {"PATH", dir.file("venv/bin")}});
        const auto& reported = result.report["python"];
        CHECK(reported["executable"] == conda + "/bin/python3");
        CHECK(reported["version"] == "3.11");
        CHECK(reported["environment"] == "conda");
        CHECK(reported["source"] == "CONDA_PREFIX");
        CHECK(reported["site_packages"] == nlohmann::json::array({conda + "/lib/python3.11/site-packages"}));
        CHECK(result.report["selected"]["mechanism"] == "xformers");
    }
    SECTION("python3 on PATH") {
        const Run result = run(dir, {{"PATH", dir.file("nothing") + ":" + dir.file("venv/bin")}});
        CHECK(result.report["python"]["executable"] == venv_python);
        CHECK(result.report["python"]["source"] == "PATH");
        CHECK(result.report["python"]["environment"] == "venv");
        CHECK(result.report["selected"]["mechanism"] == "sdpa");
    }
}

TEST_CASE("a venv with the system's site-packages reads the base interpreter's folders after its own",
          "[python]") {
    e2e::TempDir dir;
    const std::string base = dir.file("usr/local");
    fake_interpreter(base + "/bin/python3.12");
    packages(base + "/lib/python3.12/site-packages", {"torch==2.11.0"});
    const std::string python = venv(dir.file("venv"), {"flash_attn==2.8.3"}, true, base + "/bin");
    const Run result = run(dir, {{"PATH", dir.file("venv/bin")}});
    CHECK(result.report["python"]["site_packages"] ==
          nlohmann::json::array({site_of(dir.file("venv")), base + "/lib/python3.12/site-packages"}));
    CHECK(result.report["selected"]["mechanism"] == "flash2");  // flash_attn from the venv, torch from the base

    SECTION("without it, only the venv's") {
        e2e::write_file(dir.file("venv/pyvenv.cfg"),
                        "home = " + base + "/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n");
        const Run alone = run(dir, {{"PATH", dir.file("venv/bin")}});
        CHECK(alone.report["python"]["site_packages"] == nlohmann::json::array({site_of(dir.file("venv"))}));
        CHECK(candidate(alone.report, "flash2")["accepted"] == false);
    }
    SECTION("a pyvenv.cfg without the key includes them, as site.py's default") {
        e2e::write_file(dir.file("venv/pyvenv.cfg"), "home = " + base + "/bin\nversion = 3.12.3\n");
        const Run implied = run(dir, {{"PATH", dir.file("venv/bin")}});
        CHECK(implied.report["python"]["site_packages"] ==
              nlohmann::json::array({site_of(dir.file("venv")), base + "/lib/python3.12/site-packages"}));
    }
}

TEST_CASE("the user site of the workload's HOME, unless PYTHONNOUSERSITE", "[python]") {
    e2e::TempDir dir;
    const std::string python = fake_interpreter(dir.file("usr/bin/python3.12"));
    fs::create_symlink("python3.12", dir.file("usr/bin/python3"));
    const std::string system_site = packages(dir.file("usr/lib/python3.12/site-packages"), {"xformers==0.0.32"});
    const std::string user_site = packages(dir.file("home/.local/lib/python3.12/site-packages"), {"torch==2.11.0"});
    const std::map<std::string, std::string> environment{{"PATH", dir.file("usr/bin")}, {"HOME", dir.file("home")}};

    const Run with_user = run(dir, environment);
    CHECK(with_user.report["python"]["environment"] == "system");
    CHECK(with_user.report["python"]["version"] == "3.12");
    CHECK(with_user.report["python"]["site_packages"] == nlohmann::json::array({user_site, system_site}));
    CHECK(with_user.report["selected"]["mechanism"] == "xformers");

    auto no_user_site = environment;
    no_user_site["PYTHONNOUSERSITE"] = "1";
    const Run without = run(dir, no_user_site);
    CHECK(without.report["python"]["site_packages"] == nlohmann::json::array({system_site}));
    CHECK(without.report["selected"]["mechanism"] == "eager");  // xformers alone needs torch
}

TEST_CASE("PYTHONPATH entries come before the environment's own folders", "[python]") {
    e2e::TempDir dir;
    venv(dir.file("venv"), {"torch==1.13.1"});
    const std::string extra = packages(dir.file("extra"), {"torch==2.11.0"});
    const Run result = run(dir, {{"PATH", dir.file("venv/bin")}, {"PYTHONPATH", extra + ":" + dir.file("missing")}});
    CHECK(result.report["python"]["site_packages"] == nlohmann::json::array({extra, site_of(dir.file("venv"))}));
    CHECK(result.report["selected"]["mechanism"] == "sdpa");  // torch 2.11 from PYTHONPATH wins
}

TEST_CASE("precedence: --python, COMMAND, VIRTUAL_ENV, CONDA_PREFIX, PATH, the recipes", "[python]") {
    e2e::TempDir dir;
    const std::string option = venv(dir.file("option"), {});
    const std::string command = venv(dir.file("command"), {});
    const std::string active = venv(dir.file("active"), {});
    const std::string conda = dir.file("conda");
    fake_interpreter(conda + "/bin/python3");
    fs::create_directories(conda + "/conda-meta");
    const std::string on_path = venv(dir.file("on-path"), {});

    std::map<std::string, std::string> environment{{"VIRTUAL_ENV", dir.file("active")},
                                                   {"CONDA_PREFIX", conda},
                                                   {"PATH", dir.file("on-path/bin")}};
    std::vector<std::string> extra{"--python", option};
    std::vector<std::string> workload{command, "app.py"};
    auto source = [&] {
        const Run result = run(dir, environment, extra, workload);
        return std::pair{result.report["python"]["source"].get<std::string>(),
                         result.report["python"]["executable"].get<std::string>()};
    };
    CHECK(source() == std::pair{std::string("option"), option});
    extra.clear();
    environment["PROVISION_PYTHON"] = option;
    CHECK(source() == std::pair{std::string("option"), option});
    environment.erase("PROVISION_PYTHON");
    CHECK(source() == std::pair{std::string("command"), command});
    workload.clear();
    CHECK(source() == std::pair{std::string("VIRTUAL_ENV"), active});
    environment.erase("VIRTUAL_ENV");
    CHECK(source() == std::pair{std::string("CONDA_PREFIX"), conda + "/bin/python3"});
    environment.erase("CONDA_PREFIX");
    CHECK(source() == std::pair{std::string("PATH"), on_path});
    environment["PATH"] = dir.file("nothing");
    const Run none = run(dir, environment);
    CHECK(none.result.exit_code == 0);  // no interpreter is a note, not an error
    CHECK(none.report["python"]["source"] == "recipes");
    CHECK(none.report["python"]["environment"] == "none");
    CHECK(none.report["python"]["executable"] == "");
    CHECK_THAT(warnings_of(none.report), Catch::Contains("no Python interpreter found"));
    // --site-packages means exactly these folders, whatever else is set.
    environment["VIRTUAL_ENV"] = dir.file("active");
    const Run given = run(dir, environment, {"--site-packages", site_of(dir.file("option"))});
    CHECK(given.report["python"]["source"] == "site-packages");
    CHECK(given.report["python"]["site_packages"] == nlohmann::json::array({site_of(dir.file("option"))}));
}

TEST_CASE("an interpreter that does not exist", "[python]") {
    e2e::TempDir dir;
    const std::string fallback = venv(dir.file("venv"), {"torch==2.11.0"});
    const std::string missing = dir.file("gone/bin/python3");

    SECTION("given with --python or PROVISION_PYTHON: a usage error naming it") {
        const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--check",
                                            "--python", missing});
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains("--python " + missing + ": no such Python interpreter"));
        const auto from_env = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--check"},
                                             {{"PROVISION_PYTHON", missing}});
        CHECK(from_env.exit_code == 2);
        CHECK_THAT(from_env.err, Catch::Contains("PROVISION_PYTHON " + missing));
    }
    SECTION("named by the COMMAND or VIRTUAL_ENV: a note, and the next source serves") {
        const Run result = run(dir, {{"VIRTUAL_ENV", dir.file("gone")}, {"PATH", dir.file("venv/bin")}}, {},
                               {script(dir.file("tool"), "#!" + missing)});
        CHECK(result.report["python"]["executable"] == fallback);
        CHECK(result.report["python"]["source"] == "PATH");
        CHECK(result.report["selected"]["mechanism"] == "sdpa");
        const std::string warnings = warnings_of(result.report);
        CHECK_THAT(warnings, Catch::Contains("starts with #!" + missing + ", which does not exist"));
        CHECK_THAT(warnings, Catch::Contains("VIRTUAL_ENV=" + dir.file("gone") + " has no bin/python3"));
    }
}

TEST_CASE("a package built for another Python rejects the mechanisms that need it", "[python]") {
    e2e::TempDir dir;
    const std::string python = venv(dir.file("venv"), {"torch==2.11.0", "flash_attn==2.8.3"});
    const std::string record = site_of(dir.file("venv")) + "/flash_attn-2.8.3.dist-info/RECORD";

    SECTION("a cpython-310 extension in a 3.12 venv") {
        e2e::write_file(record, "flash_attn/__init__.py,sha256=x,10\n"
                                "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so,sha256=y,20\n");
        const Run result = run(dir, {{"PATH", dir.file("venv/bin")}}, {"--explain"});
        CHECK(result.result.exit_code == 0);
        const auto& flash2 = candidate(result.report, "flash2");
        CHECK(flash2["accepted"] == false);
        CHECK_THAT(flash2["reasons"].dump(), Catch::Contains("built for Python 3.10") &&
                                                 Catch::Contains("the workload's Python is 3.12"));
        CHECK(result.report["selected"]["mechanism"] == "sdpa");
        CHECK(result.report["verdict"] == "degraded");
        REQUIRE(result.report["findings"].size() == 1);
        CHECK(result.report["findings"][0]["signal"] == "python_mismatch");
        CHECK(result.report["findings"][0]["level"] == "degraded");
        CHECK_THAT(result.report["findings"][0]["message"].get<std::string>(),
                   Catch::Contains("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so") &&
                       Catch::Contains("flash2 is rejected"));
        CHECK_THAT(result.result.err, Catch::Contains("Python folders read:\n    " + site_of(dir.file("venv"))));
    }
    SECTION("a WHEEL tag for the venv's own Python is no mismatch") {
        e2e::write_file(record, "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so,,\n");  // WHEEL wins
        e2e::write_file((fs::path(record).parent_path() / "WHEEL").string(),
                        "Wheel-Version: 1.0\nTag: cp312-cp312-linux_x86_64\n");
        const Run result = run(dir, {{"PATH", dir.file("venv/bin")}});
        CHECK(result.report["selected"]["mechanism"] == "flash2");
        CHECK(result.report["findings"].empty());
        CHECK(result.report["verdict"] == "ok");
    }
    SECTION("a policy that weighs it failed stops the run") {
        e2e::write_file(record, "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so,,\n");
        e2e::write_file(dir.file("policy.toml"), "[policy]\npython_mismatch = \"failed\"\n");
        const Run result = run(dir, {{"PATH", dir.file("venv/bin")}}, {"--recipe", dir.file("policy.toml")});
        CHECK(result.result.exit_code == 5);
        CHECK(result.report["verdict"] == "failed");
    }
}
