// Finding the workload's interpreter and its folders on fake trees, without
// starting any process.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include <sys/stat.h>

#include <fmt/format.h>

#include "core/error.h"
#include "python/interpreter_locator.h"
#include "python/pyenv_shim.h"
#include "python/python_environment.h"
#include "python/workload_python.h"
#include "test_support.h"

using namespace provision;

namespace {

namespace fs = std::filesystem;

// An executable file (the fake interpreter or script) with `contents`.
std::string executable(const std::string& path, const std::string& contents = "") {
    test_support::write_file(path, contents);
    ::chmod(path.c_str(), 0755);
    return path;
}

std::string folder(const std::string& path) {
    fs::create_directories(path);
    return path;
}

// A venv at `root` whose bin/python3 links to a base interpreter elsewhere.
std::string venv(const test_support::TempDir& dir, const std::string& root, const std::string& cfg) {
    const std::string base = executable(dir.file("base/bin/python3.12"));
    folder(root + "/bin");
    fs::create_symlink(base, root + "/bin/python3");
    test_support::write_file(root + "/pyvenv.cfg", cfg);
    folder(root + "/lib/python3.12/site-packages");
    return root + "/bin/python3";
}

InterpreterSearch search_with(std::map<std::string, std::string> environment, std::vector<std::string> command = {}) {
    InterpreterSearch search;
    search.environment = std::move(environment);
    search.command = std::move(command);
    return search;
}

}  // namespace

TEST_CASE("the locator's order: option, COMMAND, VIRTUAL_ENV, CONDA_PREFIX, PATH", "[python]") {
    test_support::TempDir dir;
    const std::string on_path = executable(dir.file("path/python3"));
    const std::string virtual_env = executable(dir.file("venv/bin/python3"));
    const std::string conda = executable(dir.file("conda/bin/python"));
    const std::string chosen = executable(dir.file("chosen/bin/python3.11"));
    std::map<std::string, std::string> environment{{"PATH", dir.file("path")},
                                                   {"VIRTUAL_ENV", dir.file("venv")},
                                                   {"CONDA_PREFIX", dir.file("conda")}};

    SECTION("the option first") {
        auto search = search_with(environment, {chosen});
        search.option = on_path;
        const auto found = locate_interpreter(search);
        CHECK(found.interpreter->executable == on_path);
        CHECK(found.interpreter->source == InterpreterSource::option);
    }
    SECTION("then the COMMAND") {
        const auto found = locate_interpreter(search_with(environment, {chosen, "app.py"}));
        CHECK(found.interpreter->executable == chosen);
        CHECK(found.interpreter->source == InterpreterSource::command);
    }
    SECTION("then VIRTUAL_ENV") {
        const auto found = locate_interpreter(search_with(environment, {"/bin/sh", "-c", "true"}));
        CHECK(found.interpreter->executable == virtual_env);
        CHECK(found.interpreter->source == InterpreterSource::virtual_env);
    }
    SECTION("then CONDA_PREFIX, whose bin/python serves when there is no python3") {
        environment.erase("VIRTUAL_ENV");
        const auto found = locate_interpreter(search_with(environment));
        CHECK(found.interpreter->executable == conda);
        CHECK(found.interpreter->source == InterpreterSource::conda_prefix);
    }
    SECTION("then python3 on PATH") {
        environment.erase("VIRTUAL_ENV");
        environment.erase("CONDA_PREFIX");
        const auto found = locate_interpreter(search_with(environment));
        CHECK(found.interpreter->executable == on_path);
        CHECK(found.interpreter->source == InterpreterSource::path);
    }
    SECTION("then nothing") {
        const auto found = locate_interpreter(search_with({{"PATH", dir.file("empty")}}));
        CHECK_FALSE(found.interpreter);
        CHECK(found.notes.empty());
    }
}

TEST_CASE("the COMMAND's interpreter: by name on PATH, or a script's #! line", "[python]") {
    test_support::TempDir dir;
    const std::string venv_python = executable(dir.file("venv/bin/python3"));
    const std::string other = executable(dir.file("other/bin/python3"));
    const std::string bin = dir.file("venv/bin");
    const std::map<std::string, std::string> environment{{"PATH", bin + ":" + dir.file("other/bin")}};

    SECTION("python3 -s -m app, looked up on PATH") {
        const auto found = locate_interpreter(search_with(environment, {"python3", "-s", "-m", "app"}));
        CHECK(found.interpreter->executable == venv_python);
        CHECK(found.interpreter->flags.no_user_site);
    }
    SECTION("a console script naming its venv's python") {
        executable(bin + "/vllm", fmt::format("#!{}\nimport sys\n", venv_python));
        const auto found = locate_interpreter(search_with({{"PATH", dir.file("other/bin") + ":" + bin}},
                                                          {"vllm", "serve", "model"}));
        CHECK(found.interpreter->executable == venv_python);
        CHECK(found.interpreter->source == InterpreterSource::command);
    }
    SECTION("#!/usr/bin/env python3 means python3 on the workload's PATH") {
        const std::string script = executable(dir.file("app/run"), "#!/usr/bin/env python3\n");
        const auto found = locate_interpreter(search_with({{"PATH", dir.file("other/bin") + ":" + bin}}, {script}));
        CHECK(found.interpreter->executable == other);
    }
    SECTION("a script for another interpreter, or a binary, tells nothing") {
        const std::string script = executable(dir.file("app/start.sh"), "#!/bin/sh\nexec python3 app.py\n");
        const auto found = locate_interpreter(search_with(environment, {script}));
        CHECK(found.interpreter->source == InterpreterSource::path);
        CHECK(found.notes.empty());
    }
    SECTION("a missing interpreter is skipped with a note") {
        const std::string script = executable(dir.file("app/tool"), "#!/gone/venv/bin/python3\n");
        const auto found = locate_interpreter(search_with(environment, {script}));
        CHECK(found.interpreter->source == InterpreterSource::path);
        REQUIRE(found.notes.size() == 1);
        CHECK_THAT(found.notes[0], Catch::Contains("#!/gone/venv/bin/python3") && Catch::Contains("does not exist"));

        const auto by_path = locate_interpreter(search_with(environment, {dir.file("gone/python3.12"), "app.py"}));
        CHECK(by_path.interpreter->source == InterpreterSource::path);
        CHECK_THAT(by_path.notes.at(0), Catch::Contains("gone/python3.12 does not exist"));
    }
    SECTION("a file on PATH that is not executable is not found") {
        test_support::write_file(dir.file("plain/python3"), "");
        CHECK(find_on_path("python3", dir.file("plain")).empty());
        CHECK(find_on_path("python3", dir.file("plain") + ":" + bin) == venv_python);
    }
}

TEST_CASE("an explicit interpreter that does not exist is a usage error; a folder means its bin/python3",
          "[python]") {
    test_support::TempDir dir;
    auto search = search_with({{"PATH", "/nonexistent"}});
    search.option = dir.file("nope/bin/python3");
    search.option_name = "PROVISION_PYTHON";
    try {
        locate_interpreter(search);
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::usage);
        CHECK_THAT(error.what(), Catch::Contains("PROVISION_PYTHON " + search.option));
    }
    const std::string python = executable(dir.file("venv/bin/python3"));
    search.option = dir.file("venv");
    CHECK(locate_interpreter(search).interpreter->executable == python);
}

TEST_CASE("a venv is decided from the path as given, before links are resolved", "[python]") {
    test_support::TempDir dir;
    const std::string python =
        venv(dir, dir.file("venv"), "home = " + dir.file("base/bin") + "\ninclude-system-site-packages = false\n"
                                    "version = 3.12.3\n");
    folder(dir.file("base/lib/python3.12/site-packages"));
    folder(dir.file("home/.local/lib/python3.12/site-packages"));
    const auto environment = read_python_environment({python, InterpreterSource::path, {}},
                                                     {{"HOME", dir.file("home")}});
    CHECK(environment.kind == EnvironmentKind::venv);
    CHECK(environment.root == dir.file("venv"));
    CHECK(environment.version->str() == "3.12");
    // Neither the base's folders nor the user site: the venv leaves them out.
    CHECK(environment.site_packages == std::vector<std::string>{dir.file("venv/lib/python3.12/site-packages")});
    CHECK(environment.notes.empty());
}

TEST_CASE("a venv with the system's packages: the venv, the user site, then the base", "[python]") {
    test_support::TempDir dir;
    const std::string python =
        venv(dir, dir.file("venv"), "home = " + dir.file("base/bin") + "\ninclude-system-site-packages = true\n");
    const std::string base_site = folder(dir.file("base/lib/python3.12/site-packages"));
    const std::string user_site = folder(dir.file("home/.local/lib/python3.12/site-packages"));
    const std::string extra = folder(dir.file("extra"));
    const auto environment = read_python_environment(
        {python, InterpreterSource::path, {}},
        {{"HOME", dir.file("home")}, {"PYTHONPATH", extra + "::" + dir.file("missing")}});
    // No version in pyvenv.cfg: the link's target names it.
    CHECK(environment.version->str() == "3.12");
    // site.py adds the venv's folders before the user site ("ensures venv
    // takes precedence over user-site"), the base's after it.
    CHECK(environment.site_packages ==
          std::vector<std::string>{extra, dir.file("venv/lib/python3.12/site-packages"), user_site, base_site});

    SECTION("PYTHONNOUSERSITE and -E") {
        const auto no_user = read_python_environment(
            {python, InterpreterSource::path, {}}, {{"HOME", dir.file("home")}, {"PYTHONNOUSERSITE", "1"}});
        CHECK(std::find(no_user.site_packages.begin(), no_user.site_packages.end(), user_site) ==
              no_user.site_packages.end());
        InterpreterFlags ignore_environment;
        ignore_environment.ignore_environment = true;
        const auto ignored = read_python_environment(
            {python, InterpreterSource::path, ignore_environment},
            {{"HOME", dir.file("home")}, {"PYTHONNOUSERSITE", "1"}, {"PYTHONPATH", extra}});
        // PYTHONPATH and PYTHONNOUSERSITE unread.
        CHECK(ignored.site_packages ==
              std::vector<std::string>{dir.file("venv/lib/python3.12/site-packages"), user_site, base_site});
    }
}

TEST_CASE("conda by conda-meta, system layouts, and an unknown version", "[python]") {
    test_support::TempDir dir;
    SECTION("conda") {
        const std::string python = executable(dir.file("conda/bin/python3.11"));
        fs::create_symlink(python, dir.file("conda/bin/python"));
        folder(dir.file("conda/conda-meta"));
        const std::string site = folder(dir.file("conda/lib/python3.11/site-packages"));
        const auto environment = read_python_environment({dir.file("conda/bin/python"), InterpreterSource::path, {}},
                                                         {{"PYTHONNOUSERSITE", "x"}});
        CHECK(environment.kind == EnvironmentKind::conda);
        CHECK(environment.root == dir.file("conda"));
        CHECK(environment.version->str() == "3.11");
        CHECK(environment.site_packages == std::vector<std::string>{site});
    }
    SECTION("a Debian prefix: python3/dist-packages, then python3.Y/dist-packages (Debian's site.py)") {
        const std::string python = executable(dir.file("usr/bin/python3.12"));
        fs::create_symlink("python3.12", dir.file("usr/bin/python3"));
        const std::string dist = folder(dir.file("usr/lib/python3.12/dist-packages"));
        const std::string shared = folder(dir.file("usr/lib/python3/dist-packages"));
        folder(dir.file("usr/lib/python3.11/dist-packages"));  // another version's: not read
        const auto environment = read_python_environment({dir.file("usr/bin/python3"), InterpreterSource::path, {}},
                                                         {{"HOME", dir.file("nohome")}});
        CHECK(environment.kind == EnvironmentKind::system);
        CHECK(environment.version->str() == "3.12");
        CHECK(environment.site_packages == std::vector<std::string>{shared, dist});
    }
    SECTION("neither pyvenv.cfg nor a file name tells the version: every python3.* folder, and a note") {
        const std::string python = executable(dir.file("opt/py/bin/python3"));
        const std::string a = folder(dir.file("opt/py/lib/python3.10/site-packages"));
        const std::string b = folder(dir.file("opt/py/lib/python3.12/site-packages"));
        const auto environment = read_python_environment({python, InterpreterSource::path, {}}, {});
        CHECK_FALSE(environment.version);
        CHECK(environment.site_packages == std::vector<std::string>{a, b});
        REQUIRE(environment.notes.size() == 1);
        CHECK_THAT(environment.notes[0], Catch::Contains("cannot tell the Python version of " + python));
    }
}

TEST_CASE("--site-packages is read as given; with no interpreter the recipes' globs", "[python]") {
    test_support::TempDir dir;
    const std::string glob_site = folder(dir.file("globbed/lib/python3.9/site-packages"));
    PythonQuery query;
    query.environment = {{"PATH", dir.file("empty")}};
    query.recipe_globs = {dir.file("globbed/lib/python3*/site-packages")};
    const WorkloadPython from_globs = find_workload_python(query);
    CHECK(from_globs.source == InterpreterSource::recipes);
    CHECK(from_globs.executable.empty());
    CHECK(from_globs.site_packages == std::vector<std::string>{glob_site});
    CHECK_THAT(from_globs.notes.at(0), Catch::Contains("no Python interpreter found"));

    executable(dir.file("empty/python3.12"));
    query.site_packages = {dir.file("given")};
    const WorkloadPython given = find_workload_python(query);
    CHECK(given.source == InterpreterSource::site_packages);
    CHECK(given.site_packages == std::vector<std::string>{dir.file("given")});
    CHECK(given.executable.empty());
    query.python = "python3.12";  // on PATH: still only the folders given, but its version is known
    const WorkloadPython with_python = find_workload_python(query);
    CHECK(with_python.site_packages == std::vector<std::string>{dir.file("given")});
    CHECK(with_python.version->str() == "3.12");
}

TEST_CASE("discovery costs a few file-system calls, no process", "[python][cost]") {
    test_support::TempDir dir;
    const std::string python =
        venv(dir, dir.file("venv"), "home = " + dir.file("base/bin") + "\ninclude-system-site-packages = true\n");
    folder(dir.file("base/lib/python3.12/site-packages"));
    folder(dir.file("home/.local/lib/python3.12/site-packages"));
    executable(dir.file("venv/bin/vllm"), "#!" + python + "\n");
    // Run, the interpreter (directly or through the console script) would
    // leave this mark.
    const std::string ran = dir.file("interpreter-ran");
    executable(dir.file("base/bin/python3.12"), "#!/bin/sh\ntouch " + ran + "\n");
    PythonQuery query;
    query.command = {"vllm", "serve", "model"};
    query.environment = {{"PATH", dir.file("venv/bin") + ":/usr/bin:/bin"},
                         {"HOME", dir.file("home")},
                         {"PYTHONPATH", dir.file("missing")}};
    constexpr int kRounds = 200;
    const auto start = std::chrono::steady_clock::now();
    std::size_t folders = 0;
    for (int i = 0; i < kRounds; ++i) folders += find_workload_python(query).site_packages.size();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kRounds;
    // The time is shown, not asserted (bench/python_discovery_cost measures it).
    WARN(fmt::format("found the interpreter through a console script and its 3 folders in {:.1f} us", us));
    CHECK(folders == 3 * kRounds);
    CHECK_FALSE(fs::exists(ran));
}

TEST_CASE("a pyenv shim stands for the version pyenv would choose", "[python]") {
    test_support::TempDir dir;
    const std::string root = dir.file("pyenv");
    executable(root + "/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n");
    const std::string v311 = executable(root + "/versions/3.11.7/bin/python3");
    const std::string v312 = executable(root + "/versions/3.12.1/bin/python3");
    test_support::write_file(root + "/version", "3.11.7\n");
    test_support::write_file(dir.file("app/.python-version"), "3.12.1\n");
    folder(dir.file("app/sub"));

    const auto global = resolve_pyenv_shim(root + "/shims/python3", {}, dir.file("elsewhere")).target;
    REQUIRE(global);
    CHECK(global->executable == v311);
    CHECK(global->chosen_by == root + "/version");
    const auto local = resolve_pyenv_shim(root + "/shims/python3", {}, dir.file("app/sub")).target;
    REQUIRE(local);
    CHECK(local->executable == v312);
    CHECK(local->chosen_by == dir.file("app/.python-version"));
    const auto by_variable =
        resolve_pyenv_shim(root + "/shims/python3", {{"PYENV_VERSION", "3.11.7:3.12.1"}}, dir.file("app")).target;
    CHECK(by_variable->executable == v311);
    CHECK_FALSE(resolve_pyenv_shim(root + "/shims/python3", {{"PYENV_VERSION", "system"}}, dir.file("app")).target);
    const auto not_installed = resolve_pyenv_shim(root + "/shims/python3", {{"PYENV_VERSION", "3.9.0"}}, dir.file("app"));
    CHECK_FALSE(not_installed.target);
    CHECK_THAT(not_installed.notes.at(0), Catch::Contains("3.9.0"));
    CHECK_FALSE(resolve_pyenv_shim(v311, {}, dir.file("app")).target);

    SECTION("a version file as pyenv reads it: comments and blank lines skipped, paths refused") {
        CHECK(read_pyenv_version_file("# pinned for the app\n\n  3.12.1  trailing words\n3.11.7\n") ==
              std::vector<std::string>{"3.12.1", "3.11.7"});
        test_support::write_file(dir.file("app/.python-version"), "# a comment first\n3.12.1\n");
        CHECK(resolve_pyenv_shim(root + "/shims/python3", {}, dir.file("app")).target->executable == v312);
        executable(dir.file("evil/bin/python3"));
        test_support::write_file(dir.file("app/.python-version"), "../../evil\n");
        const auto refused = resolve_pyenv_shim(root + "/shims/python3", {}, dir.file("app"));
        CHECK_FALSE(refused.target);
        CHECK_THAT(refused.notes.at(0), Catch::Contains("'../../evil', which pyenv refuses"));
        // The nearest version file decides, even when it names nothing: "system".
        test_support::write_file(dir.file("app/.python-version"), "# nothing\n");
        CHECK_FALSE(resolve_pyenv_shim(root + "/shims/python3", {}, dir.file("app/sub")).target);
    }

    const auto found = locate_interpreter(search_with({{"PATH", root + "/shims"}, {"PYENV_VERSION", "3.12.1"}}));
    CHECK(found.interpreter->executable == v312);
    CHECK(found.interpreter->source == InterpreterSource::path);
    CHECK_THAT(found.notes.at(0), Catch::Contains("is a pyenv shim; PYENV_VERSION chooses " + v312));
}
