// Files that are not what they seem: a device node, a FIFO, a folder or a
// symbolic link where the env file goes; a FIFO or a device where a recipe
// or a METADATA file is read.  provision never replaces what is not a
// regular file, never blocks on a FIFO, never reads an endless device, and
// leaves no temporary file behind.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "net/local_http_server.h"
#include "support/reliability_record.h"

using e2e::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> h100_args(const std::string& env_file) {
    return {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages", e2e::site_packages("all"),
            "--no-validate", "--env-file",  env_file};
}

// provision under `timeout`: a run that blocks is killed after 20 s and
// shows as exit 137 instead of hanging the suite.
e2e::Result provision_within_20s(const std::vector<std::string>& args,
                                 const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> all{"-s", "KILL", "20", PROVISION_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    return e2e::run("timeout", all, env);
}

}  // namespace

TEST_CASE("an env file path that is a FIFO, a folder or a symbolic link is left as it is: exit 6 saying what it is") {
    TempDir dir;
    SECTION("a FIFO") {
        const std::string fifo = dir.file("env-fifo");
        REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
        const auto result = provision_within_20s(h100_args(fifo));
        INFO(result.err);
        CHECK(result.exit_code == 6);
        CHECK_THAT(result.err, Catch::Contains("it is a FIFO, not a regular file"));
        CHECK(fs::is_fifo(fifo));
        reliability::record("env file", "the env file path is a FIFO", "exit 6 naming it a FIFO; the FIFO stays");
    }
    SECTION("a symbolic link to a regular file") {
        const std::string target = dir.file("real-settings");
        e2e::write_file(target, "export OLD='kept'\n");
        const std::string link = dir.file(".env_settings");
        fs::create_symlink(target, link);
        const auto result = e2e::provision(h100_args(link));
        INFO(result.err);
        CHECK(result.exit_code == 6);
        CHECK_THAT(result.err, Catch::Contains("it is a symbolic link to " + target));
        CHECK(fs::is_symlink(link));
        CHECK(e2e::read_file(target) == "export OLD='kept'\n");
        reliability::record("env file", "the env file path is a symbolic link to a regular file",
                            "exit 6 naming the link and its target; link and target unchanged");
    }
    SECTION("a folder") {
        const std::string folder = dir.file("settings.d");
        fs::create_directory(folder);
        const auto result = e2e::provision(h100_args(folder));
        CHECK(result.exit_code == 6);
        CHECK_THAT(result.err, Catch::Contains("it is a folder, not a regular file"));
        CHECK(fs::is_directory(folder));
        reliability::record("env file", "the env file path is a folder", "exit 6 naming it a folder; folder unchanged");
    }
    SECTION("with a COMMAND the workload still starts, with the settings in its environment") {
        const std::string fifo = dir.file("env-fifo");
        REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
        auto args = h100_args(fifo);
        args.insert(args.end(), {"--", "/bin/sh", "-c", "echo \"$PROVISION_ATTENTION\""});
        const auto result = provision_within_20s(args);
        CHECK(result.exit_code == 0);
        CHECK(result.out == "flash3\n");
        CHECK(fs::is_fifo(fifo));
    }
}

TEST_CASE("an env file path that is a character device is never replaced (mknod needs root)") {
    if (::geteuid() != 0) {
        WARN("skipped: creating a character device with mknod needs root");
        return;
    }
    TempDir dir;
    const std::string device = dir.file("null-device");
    REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);
    const auto result = e2e::provision(h100_args(device));
    INFO(result.err);
    CHECK(result.exit_code == 6);
    CHECK_THAT(result.err, Catch::Contains("it is a character device, not a regular file"));
    CHECK(fs::is_character_file(device));
    reliability::record("env file", "the env file path is a character device (mknod c 1 3)",
                        "exit 6 naming it a character device; the device node stays");
}

TEST_CASE("--env-file /dev/null discards the settings: exit 0, /dev/null untouched") {
    const auto result = e2e::provision(h100_args("/dev/null"));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.err, Catch::Contains("env file /dev/null: the settings are discarded"));
    CHECK_THAT(result.err, Catch::Contains("not written"));
    CHECK(fs::is_character_file("/dev/null"));
    reliability::record("env file", "--env-file /dev/null", "exit 0; settings discarded, /dev/null stays a device");
}

TEST_CASE("a FIFO or a device given as a recipe is refused at once with exit 3; a huge local recipe too") {
    TempDir dir;
    SECTION("a FIFO as --recipe") {
        const std::string fifo = dir.file("recipe.toml");
        REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
        auto args = h100_args(dir.file(".env_settings"));
        args.insert(args.end(), {"--recipe", fifo});
        const auto result = provision_within_20s(args);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains(fifo + ": cannot be read: is a FIFO, not a regular file"));
        reliability::record("recipe input", "a FIFO as --recipe", "exit 3 at once naming it a FIFO; nothing read");
    }
    SECTION("PROVISION_RECIPE=/dev/zero") {
        const auto result = provision_within_20s(h100_args(dir.file(".env_settings")), {{"PROVISION_RECIPE", "/dev/zero"}});
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains("/dev/zero: cannot be read: is a character device"));
        reliability::record("recipe input", "PROVISION_RECIPE=/dev/zero",
                            "exit 3 at once naming a character device; nothing read");
    }
    SECTION("a local recipe over 1 MiB") {
        const std::string big = dir.file("big.toml");
        e2e::write_file(big, "# " + std::string(1024 * 1024 + 10, 'x') + "\n");
        auto args = h100_args(dir.file(".env_settings"));
        args.insert(args.end(), {"--recipe", big});
        const auto result = e2e::provision(args);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains("larger than the limit of 1048576 bytes"));
        reliability::record("recipe input", "a local recipe file over 1 MiB",
                            "exit 3 naming the 1 MiB limit, as for remote recipes");
    }
}

TEST_CASE("a FIFO named METADATA in a dist-info folder does not block the scan; the package is 'not counted'") {
    TempDir dir;
    const std::string site = dir.file("site-packages");
    fs::copy(e2e::site_packages("all"), site, fs::copy_options::recursive);
    const std::string metadata = site + "/flash_attn_3-3.0.0b1.dist-info/METADATA";
    REQUIRE(fs::exists(metadata));
    fs::remove(metadata);
    REQUIRE(::mkfifo(metadata.c_str(), 0644) == 0);
    const auto result = provision_within_20s({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages", site,
                                              "--no-validate", "--env-file", dir.file(".env_settings"), "--explain",
                                              "--json"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(e2e::report(result)["selected"]["mechanism"] == "flash2");
    CHECK_THAT(result.err, Catch::Contains("METADATA is unreadable: it is a FIFO, not a regular file"));
    CHECK_THAT(result.err, Catch::Contains("not counted"));
    reliability::record("packages", "a FIFO named METADATA in a dist-info folder",
                        "no wait; the package is reported as not counted, with why; the next mechanism serves");
}

TEST_CASE("an uncreatable PROVISION_CACHE_DIR leaves no recipe copy in the temporary folder") {
    TempDir dir;
    const std::string tmp = dir.file("tmp");
    fs::create_directory(tmp);
    net_test::LocalHttpServer server([](const net_test::Request&) {
        return net_test::respond(200, "OK", "[workloads.generic.env]\nREMOTE_RECIPE_MARK = \"served\"\n");
    });
    auto args = h100_args(dir.file(".env_settings"));
    args.insert(args.end(), {"--recipe", server.url("/recipe.toml"), "--allow-http", "--json"});
    // /proc takes no new folder, root or not.
    const auto result = e2e::provision(args, {{"PROVISION_CACHE_DIR", "/proc/provision-cache"}, {"TMPDIR", tmp}});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(e2e::report(result)["env"]["REMOTE_RECIPE_MARK"] == "served");
    CHECK(fs::is_empty(tmp));
    reliability::record("network", "PROVISION_CACHE_DIR cannot be created",
                        "the fetched recipe is used from a temporary copy, removed after loading; warning");
}
