#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "env/env_file.h"
#include "test_support.h"

using namespace provision;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

TEST_CASE("shell_quote single-quotes and escapes single quotes") {
    CHECK(shell_quote("plain") == "'plain'");
    CHECK(shell_quote("") == "''");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("$(rm -rf /) `x` \"y\"") == "'$(rm -rf /) `x` \"y\"'");
}

TEST_CASE("render_env_file writes a comment header and one export per line") {
    EnvSettings settings;
    settings.set("PROVISION_ATTENTION", "flash3");
    settings.set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    const std::string text = render_env_file(settings, "first line\nGPU 0: evil\nexport PWNED=1");
    CHECK(text ==
          "# first line\n# GPU 0: evil\n# export PWNED=1\n"
          "export PROVISION_ATTENTION='flash3'\nexport PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'\n");
}

TEST_CASE("EnvSettings refuses names that are not shell variable names") {
    EnvSettings settings;
    CHECK_THROWS_AS(settings.set("1ABC", "x"), Error);
    CHECK_THROWS_AS(settings.set("A-B", "x"), Error);
    CHECK_THROWS_AS(settings.set("A;rm", "x"), Error);
    CHECK_NOTHROW(settings.set("_A1", "x"));
    CHECK(is_valid_variable_name("PROVISION_ATTENTION"));
    CHECK_FALSE(is_valid_variable_name(""));
}

TEST_CASE("writing replaces the old file atomically, mode 0644, no temporary left behind") {
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_file(path, "old contents\n");
    write_env_file_atomically(path, "export A='1'\n");
    CHECK(read_file(path) == "export A='1'\n");
    struct stat info {};
    REQUIRE(stat(path.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0644);
    int entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
    CHECK(entries == 1);
}

TEST_CASE("a failed write leaves the old file as it was") {
    if (geteuid() == 0) {
        // root ignores folder permissions; a missing folder still fails.
        TempDir dir;
        const std::string path = dir.file("missing/sub/.env_settings");
        CHECK_THROWS_AS(write_env_file_atomically(path, "x"), Error);
        return;
    }
    TempDir dir;
    const std::string path = dir.file(".env_settings");
    write_file(path, "old contents\n");
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    try {
        write_env_file_atomically(path, "new");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("unchanged"));
    }
    CHECK(read_file(path) == "old contents\n");
}

TEST_CASE("a path whose folder does not exist is a clear error") {
    TempDir dir;
    try {
        write_env_file_atomically(dir.file("no/such/folder/.env"), "x");
        FAIL("no error");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::io_failure);
        CHECK_THAT(error.what(), Catch::Contains("cannot create a temporary file"));
    }
}

TEST_CASE("a planted symlink at the target is replaced, not followed") {
    TempDir dir;
    const std::string victim = dir.file("victim");
    write_file(victim, "precious\n");
    const std::string path = dir.file(".env_settings");
    std::filesystem::create_symlink(victim, path);
    write_env_file_atomically(path, "export A='1'\n");
    CHECK(read_file(victim) == "precious\n");
    CHECK_FALSE(std::filesystem::is_symlink(path));
    CHECK(read_file(path) == "export A='1'\n");
}
