// A cached remote recipe is used in place of an unreachable server only when
// it is verified: the size and checksum its metadata recorded, this user's
// files in a folder no one else may write.  An edited, swapped or exposed
// copy is refused (exit 3) instead of trusted.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "net/local_http_server.h"
#include "support/reliability_record.h"

using e2e::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kRecipe = "[workloads.generic.env]\nREMOTE_RECIPE_MARK = \"served\"\n";

struct CachedRun {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string body;  // the cached body's path
};

// Fetches the recipe once (so it is cached), then stops the server.
CachedRun cache_then_stop_server(const TempDir& dir) {
    auto server = std::make_unique<net_test::LocalHttpServer>(
        [](const net_test::Request&) { return net_test::respond(200, "OK", kRecipe, {"ETag: \"v1\""}); });
    CachedRun run;
    run.args = {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages", e2e::site_packages("all"),
                "--no-validate", "--env-file",  dir.file(".env_settings"), "--recipe", server->url("/r.toml"),
                "--allow-http",  "--json"};
    run.env = {{"PROVISION_CACHE_DIR", dir.file("cache")}};
    const auto first = e2e::provision(run.args, run.env);
    REQUIRE(first.exit_code == 0);
    std::filesystem::remove(dir.file(".env_settings"));  // a later run that is refused writes none
    for (const auto& entry : fs::directory_iterator(dir.file("cache") + "/recipes"))
        if (entry.path().extension() == ".toml") run.body = entry.path();
    REQUIRE_FALSE(run.body.empty());
    return run;  // the server stops here: nothing listens on its port any more
}

}  // namespace

TEST_CASE("an intact cached recipe is still used when the server is down") {
    TempDir dir;
    const CachedRun run = cache_then_stop_server(dir);
    const auto result = e2e::provision(run.args, run.env);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(e2e::report(result)["env"]["REMOTE_RECIPE_MARK"] == "served");
}

TEST_CASE("a cached recipe edited after it was fetched is refused with exit 3") {
    TempDir dir;
    const CachedRun run = cache_then_stop_server(dir);
    e2e::write_file(run.body, kRecipe + "LD_PRELOAD = \"/tmp/evil.so\"\n");
    const auto result = e2e::provision(run.args, run.env);
    INFO(result.err);
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains("the cached copy at " + run.body + " is refused") &&
                               Catch::Contains("does not match its metadata"));
    CHECK_FALSE(fs::exists(dir.file(".env_settings")));
    reliability::record("network", "cached recipe edited (LD_PRELOAD added), server down",
                        "exit 3: size and checksum differ from the cache metadata; the copy is not used",
                        "the run (by design)");
}

TEST_CASE("a cached recipe writable by others, or owned by another user, is refused with exit 3") {
    TempDir dir;
    const CachedRun run = cache_then_stop_server(dir);
    SECTION("group- and world-writable") {
        ::chmod(run.body.c_str(), 0666);
        const auto result = e2e::provision(run.args, run.env);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains("writable by its group or by everyone (mode 0666)"));
        reliability::record("network", "cached recipe of mode 0666, server down", "exit 3 naming the mode",
                            "the run (by design)");
    }
    SECTION("another owner (chown needs root)") {
        if (::geteuid() != 0) {
            WARN("skipped: giving a file to another user needs root");
            return;
        }
        REQUIRE(::chown(run.body.c_str(), 12345, 12345) == 0);
        const auto result = e2e::provision(run.args, run.env);
        CHECK(result.exit_code == 3);
        CHECK_THAT(result.err, Catch::Contains("is owned by uid 12345, not by this user"));
        reliability::record("network", "cached recipe owned by another user, server down", "exit 3 naming the owner",
                            "the run (by design)");
    }
}
