// The recipes compiled into the binary: the same files as recipes/, loaded
// with their positions, written out by --print-recipes without overwriting.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_export.h"
#include "recipe/recipe_loader.h"
#include "test_support.h"

using namespace provision;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

namespace fs = std::filesystem;

namespace {

std::vector<std::string> toml_files_below(const std::string& folder) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(folder))
        if (entry.is_regular_file() && entry.path().extension() == ".toml")
            files.push_back(fs::relative(entry.path(), folder).string());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST_CASE("the embedded recipes are recipes/, file for file and byte for byte, in the loader's order") {
    const std::string folder = test_support::source_path("recipes");
    std::vector<std::string> embedded;
    for (const auto& recipe : embedded_recipes()) {
        embedded.emplace_back(recipe.path);
        CHECK(std::string(recipe.text) == read_file(folder + "/" + std::string(recipe.path)));
    }
    CHECK(embedded == toml_files_below(folder));
    const std::string digest(embedded_recipes_digest());
    CHECK(digest.size() == 12);
    CHECK(digest.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("the embedded recipes load like the folder, and name themselves builtin:recipes/<path> with positions") {
    const RecipeSet embedded = load_recipes_over_builtins(std::nullopt, {});
    const RecipeSet folder = load_recipes({test_support::source_path("recipes")});
    CHECK(embedded.mechanism_names() == folder.mechanism_names());
    CHECK(embedded.workloads.size() == folder.workloads.size());
    CHECK(embedded.architectures.size() == folder.architectures.size());
    REQUIRE(embedded.files.size() == folder.files.size());
    CHECK(embedded.files.front() == "builtin:recipes/architectures.toml");
    const SourceRef& where = embedded.workloads.at("generic").preference_source.at("hopper");
    CHECK(where.file == "builtin:recipes/workloads/generic.toml");
    CHECK(where.line == folder.workloads.at("generic").preference_source.at("hopper").line);
    CHECK(where.line > 0);
}

TEST_CASE("a user recipe merges over the embedded ones; a replacement folder stands in for them") {
    TempDir dir;
    write_file(dir.file("user.toml"), "[workloads.generic.preference]\nhopper = [\"sdpa\", \"eager\"]\n");
    const RecipeSet merged = load_recipes_over_builtins(std::nullopt, {dir.file("user.toml")});
    CHECK(merged.workloads.at("generic").preference.at("hopper") == std::vector<std::string>{"sdpa", "eager"});
    CHECK(merged.mechanisms.count("flash3") == 1);  // still the built-ins underneath

    write_file(dir.file("replacement/only.toml"),
               "[mechanisms.eager]\n[workloads.generic.preference]\ndefault = [\"eager\"]\n");
    const auto folder = builtin_recipe_folder(dir.file("replacement"));
    REQUIRE(folder);
    const RecipeSet replaced = load_recipes_over_builtins(folder, {});
    CHECK(replaced.mechanism_names() == std::vector<std::string>{"eager"});
    CHECK(replaced.files == std::vector<std::string>{dir.file("replacement/only.toml")});
}

TEST_CASE("PROVISION_BUILTIN_RECIPES: empty means the embedded recipes; a path that is no folder is refused") {
    CHECK_FALSE(builtin_recipe_folder(""));
    TempDir dir;
    write_file(dir.file("file.toml"), "");
    for (const std::string& bad : {dir.file("missing"), dir.file("file.toml")}) {
        try {
            (void)builtin_recipe_folder(bad);
            FAIL("accepted " << bad);
        } catch (const Error& error) {
            CHECK(error.code() == ExitCode::invalid_input);
            CHECK_THAT(error.what(), Catch::Contains("PROVISION_BUILTIN_RECIPES=" + bad) &&
                                         Catch::Contains("not a folder"));
        }
    }
}

TEST_CASE("writing the embedded recipes out: every file, readable, and never over an existing file") {
    TempDir dir;
    const std::string out = dir.file("new/recipes");
    const auto written = write_embedded_recipes(out);
    REQUIRE(written.size() == embedded_recipes().size());
    for (const auto& recipe : embedded_recipes()) {
        const std::string path = out + "/" + std::string(recipe.path);
        CHECK(read_file(path) == std::string(recipe.text));
        struct stat info {};
        REQUIRE(::stat(path.c_str(), &info) == 0);
        CHECK((info.st_mode & 0777) == 0644);
    }
    CHECK(toml_files_below(out).size() == written.size());  // and no temporary file left behind
    CHECK(std::distance(fs::recursive_directory_iterator(out), fs::recursive_directory_iterator()) ==
          static_cast<long>(written.size()) + 1);  // the files and workloads/

    // A second run, or a folder holding one of the names: refused, nothing written.
    const std::string partial = dir.file("partial");
    write_file(partial + "/mechanisms.toml", "# mine\n");
    for (const std::string& folder : {out, partial}) {
        try {
            (void)write_embedded_recipes(folder);
            FAIL("overwrote files in " << folder);
        } catch (const Error& error) {
            CHECK(error.code() == ExitCode::io_failure);
            CHECK_THAT(error.what(), Catch::Contains(folder + "/mechanisms.toml") && Catch::Contains("already exist"));
        }
    }
    CHECK(read_file(partial + "/mechanisms.toml") == "# mine\n");
    CHECK(toml_files_below(partial) == std::vector<std::string>{"mechanisms.toml"});
}
