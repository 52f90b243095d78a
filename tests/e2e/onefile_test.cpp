// One file: the binary carries its recipes (--version names them,
// --print-recipes writes them out, PROVISION_BUILTIN_RECIPES replaces them)
// and runs when copied alone into an empty folder.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "support/reliability_record.h"

using e2e::TempDir;

namespace {

// The digest of a recipe folder, computed as cmake/embed_recipes.cmake
// documents it, with coreutils.
std::string digest_of_folder(const std::string& folder) {
    const auto result = e2e::run("/bin/sh", {"-c", "cd \"$0\" && find . -name '*.toml' | sed 's|^\\./||' | "
                                                   "LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12",
                                             folder});
    REQUIRE(result.exit_code == 0);
    return result.out.substr(0, result.out.find('\n'));
}

std::string version_line(const std::string& version, const std::string& prefix) {
    std::istringstream lines(version);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) return line;
    return "";
}

}  // namespace

TEST_CASE("--version names the built-in recipes by digest and the kernels' GPU targets") {
    const auto version = e2e::provision({"--version"});
    INFO(version.out);
    REQUIRE(version.exit_code == 0);
    const std::string recipes = version_line(version.out, "recipes: ");
    std::smatch match;
    REQUIRE(std::regex_match(recipes, match, std::regex(R"(recipes: (\d+) built in, digest ([0-9a-f]{12}))")));
    CHECK(match[2] == digest_of_folder(e2e::source_path("recipes")));
    const std::string kernels = version_line(version.out, "kernels: ");
    CHECK((kernels == "kernels: none (built without CUDA)" ||
           std::regex_match(kernels, std::regex(R"(kernels: sm_\d+.*)"))));

    const auto replaced = e2e::provision({"--version"}, {{"PROVISION_BUILTIN_RECIPES", "/srv/recipes"}});
    CHECK_THAT(replaced.out, Catch::Contains("(replaced here by PROVISION_BUILTIN_RECIPES=/srv/recipes)"));
    // Answered whatever else the settings hold: a bad value elsewhere is no reason to withhold it.
    const auto despite = e2e::provision({"--version"}, {{"PROVISION_FORCE", "sure"}, {"PROVISION_DETECT_TIMEOUT", "soon"}});
    CHECK(despite.exit_code == 0);
    CHECK_THAT(despite.out, Catch::Contains("recipes: "));
}

TEST_CASE("the binary copied alone into an empty folder selects, reports and writes the env file") {
    TempDir dir;
    const std::string alone = dir.file("bin/provision");
    std::filesystem::create_directories(dir.file("bin"));
    std::filesystem::copy_file(PROVISION_BINARY, alone);
    const auto result = e2e::run(alone, {"--gpu-fixture", e2e::gpu_fixture("h100"), "--json", "--site-packages",
                                         e2e::site_packages("all"), "--env-file", dir.file("env")});
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(e2e::report(result)["selected"]["mechanism"] == "flash3");
    CHECK_THAT(e2e::read_file(dir.file("env")), Catch::Contains("export PROVISION_ATTENTION='flash3'"));
    reliability::record("one file", "binary copied alone into an empty folder (no recipes beside it)",
                        "selects from the recipes compiled in; env file written");
}

TEST_CASE("--print-recipes writes the built-ins out once; it never overwrites") {
    TempDir dir;
    const std::string out = dir.file("mine");
    const auto first = e2e::provision({"--print-recipes", out});
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK_THAT(first.out, Catch::Contains(out + "/mechanisms.toml\n") &&
                              Catch::Contains(out + "/workloads/comfyui.toml\n"));
    CHECK(e2e::read_file(out + "/mechanisms.toml") == e2e::read_file(e2e::source_path("recipes/mechanisms.toml")));
    CHECK(digest_of_folder(out) == digest_of_folder(e2e::source_path("recipes")));

    e2e::write_file(out + "/mechanisms.toml", "# edited\n");
    const auto again = e2e::provision({"--print-recipes", out});
    CHECK(again.exit_code == 6);
    CHECK_THAT(again.err, Catch::Contains(out + "/mechanisms.toml") && Catch::Contains("already exist") &&
                              Catch::Contains("nothing written"));
    CHECK(e2e::read_file(out + "/mechanisms.toml") == "# edited\n");
    reliability::record("one file", "--print-recipes into a folder that holds the files already",
                        "exit 6 naming them; nothing overwritten");

    CHECK(e2e::provision({"--print-recipes", ""}).exit_code == 2);
    CHECK(e2e::provision({"--print-recipes"}).exit_code == 2);
    e2e::write_file(dir.file("plain-file"), "");
    const auto not_a_folder = e2e::provision({"--print-recipes", dir.file("plain-file")});
    CHECK(not_a_folder.exit_code == 6);
    CHECK_THAT(not_a_folder.err, Catch::Contains(dir.file("plain-file")));
}

TEST_CASE("PROVISION_BUILTIN_RECIPES replaces the built-ins; user recipes still merge over them") {
    TempDir dir;
    const std::string folder = dir.file("recipes");
    REQUIRE(e2e::provision({"--print-recipes", folder}).exit_code == 0);
    // The replacement prefers sdpa on Hopper; a user recipe then prefers eager.
    std::string generic = e2e::read_file(folder + "/workloads/generic.toml");
    const std::regex hopper(R"(\nhopper\s*=\s*\[[^\]]*\])");
    REQUIRE(std::regex_search(generic, hopper));
    e2e::write_file(folder + "/workloads/generic.toml",
                    std::regex_replace(generic, hopper, "\nhopper = [\"sdpa\"]", std::regex_constants::format_first_only));
    const std::vector<std::string> args{"--gpu-fixture", e2e::gpu_fixture("h100"), "--json", "--site-packages",
                                        e2e::site_packages("all"), "--env-file", dir.file("env")};
    const auto replaced = e2e::provision(args, {{"PROVISION_BUILTIN_RECIPES", folder}});
    INFO(replaced.err);
    REQUIRE(replaced.exit_code == 0);
    CHECK(e2e::report(replaced)["selected"]["mechanism"] == "sdpa");

    e2e::write_file(dir.file("user.toml"), "[workloads.generic.preference]\nhopper = [\"eager\"]\n");
    auto with_user = args;
    with_user.insert(with_user.end(), {"--recipe", dir.file("user.toml")});
    const auto merged = e2e::provision(with_user, {{"PROVISION_BUILTIN_RECIPES", folder}});
    REQUIRE(merged.exit_code == 0);
    CHECK(e2e::report(merged)["selected"]["mechanism"] == "eager");

    const auto missing = e2e::provision(args, {{"PROVISION_BUILTIN_RECIPES", dir.file("nowhere")}});
    CHECK(missing.exit_code == 3);
    CHECK_THAT(missing.err, Catch::Contains("PROVISION_BUILTIN_RECIPES=" + dir.file("nowhere")));
}

TEST_CASE("errors still unwind where glibc lacks _dl_find_object (2.34): the dl_iterate_phdr walk") {
    TempDir dir;
    e2e::write_file(dir.file("bad.toml"), "[mechanisms.flash2]\nmin_compute_capability = \"eight\"\n");
    // PROVISION_TEST_UNWIND_FALLBACK=1 makes src/glibc_compat.cpp skip glibc's
    // own lookup, as on glibc 2.34; the error is an exception thrown through it.
    const auto bad = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--recipe", dir.file("bad.toml"),
                                     "--env-file", dir.file("env")},
                                    {{"PROVISION_TEST_UNWIND_FALLBACK", "1"}});
    CHECK(bad.exit_code == 3);
    CHECK_THAT(bad.err, Catch::Contains(dir.file("bad.toml") + ":2:"));
    const auto good = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--env-file", dir.file("env")},
                                     {{"PROVISION_TEST_UNWIND_FALLBACK", "1"}});
    CHECK(good.exit_code == 0);
}

TEST_CASE("--json --print-recipes prints one JSON document naming the files, or the error document") {
    TempDir dir;
    const std::string out = dir.file("mine");
    const auto first = e2e::provision({"--json", "--print-recipes", out});
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const auto written = e2e::report(first);
    CHECK(written["schema"] == 1);
    CHECK(written["recipes"]["folder"] == out);
    std::vector<std::string> files = written["recipes"]["files"];
    CHECK(std::find(files.begin(), files.end(), out + "/mechanisms.toml") != files.end());
    CHECK(std::find(files.begin(), files.end(), out + "/workloads/comfyui.toml") != files.end());
    CHECK(first.out.find('\n') == first.out.size() - 1);  // one line

    const auto again = e2e::provision({"--json", "--print-recipes", out});
    CHECK(again.exit_code == 6);
    const auto error = e2e::report(again);
    CHECK(error["error"]["exit_code"] == 6);
    CHECK_THAT(error["error"]["message"].get<std::string>(), Catch::Contains("already exist"));
    const auto empty = e2e::provision({"--json", "--print-recipes", ""});
    CHECK(empty.exit_code == 2);
    CHECK(e2e::report(empty)["error"]["exit_code"] == 2);
    reliability::record("one file", "--json --print-recipes DIR, then again into the same folder, then with \"\"",
                        "one JSON document naming every file written; exit 6 and 2 with the JSON error document "
                        "on stdout");
}
