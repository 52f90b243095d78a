// localize_recipes: paths pass through, URLs become local copies, in order,
// and fetch warnings come along.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "../net/local_http_server.h"
#include "core/error.h"
#include "net/recipe_locations.h"
#include "test_support.h"

namespace {

using net_test::LocalHttpServer;
using net_test::Request;
using net_test::respond;

const std::string kRecipe = "[workloads.remote]\ndescription = \"fetched\"\n";

provision::FetchOptions options_for(const test_support::TempDir& cache) {
    provision::FetchOptions options;
    options.allow_http = true;  // the test server is plain http on loopback
    options.cache_dir = cache.path();
    options.total_timeout_ms = 3000;
    return options;
}

}  // namespace

TEST_CASE("localize_recipes keeps paths and their order, and replaces each URL by its local copy") {
    test_support::TempDir cache;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipe); });
    const auto local = provision::localize_recipes({"/etc/first.toml", server.url("/r.toml"), "relative/dir"},
                                                   options_for(cache));
    REQUIRE(local.paths.size() == 3);
    CHECK(local.paths[0] == "/etc/first.toml");
    CHECK(local.paths[1].rfind(cache.path(), 0) == 0);
    CHECK(test_support::read_file(local.paths[1]) == kRecipe);
    CHECK(local.paths[2] == "relative/dir");
    CHECK(local.warnings.empty());
    CHECK(server.requests().size() == 1);
}

TEST_CASE("localize_recipes passes the cached copy's warning on, and fails without a copy") {
    test_support::TempDir cache;
    auto server = std::make_unique<LocalHttpServer>([](const Request&) { return respond(200, "OK", kRecipe); });
    const std::string url = server->url("/r.toml");
    const std::string other = server->url("/never-fetched.toml");
    provision::localize_recipes({url}, options_for(cache));
    server.reset();

    const auto local = provision::localize_recipes({url}, options_for(cache));
    REQUIRE(local.paths.size() == 1);
    CHECK(test_support::read_file(local.paths[0]) == kRecipe);
    REQUIRE(local.warnings.size() == 1);
    CHECK_THAT(local.warnings[0], Catch::Contains(url) && Catch::Contains("cached"));

    try {
        provision::localize_recipes({url, other}, options_for(cache));
        FAIL("expected an error for the URL without a cached copy");
    } catch (const provision::Error& error) {
        CHECK(error.code() == provision::ExitCode::invalid_input);
        CHECK_THAT(error.what(), Catch::Contains(other));
    }
}

TEST_CASE("LocalRecipes::with_origins names the URL after each fetched copy in a loader message") {
    provision::LocalRecipes local;
    local.origins = {{"/cache/recipes/ab.toml", "https://host/r.toml?token=***"},
                     {"/cache/recipes/ab.toml", "https://host/r.toml?token=***"}};
    CHECK(local.with_origins("/cache/recipes/ab.toml:2:9: unknown mechanism 'flsh2'") ==
          "/cache/recipes/ab.toml:2:9 (fetched from https://host/r.toml?token=***): unknown mechanism 'flsh2'");
    CHECK(local.with_origins("cannot read /cache/recipes/ab.toml") ==
          "cannot read /cache/recipes/ab.toml (fetched from https://host/r.toml?token=***)");
    CHECK(local.with_origins("/etc/local.toml:1:1: bad") == "/etc/local.toml:1:1: bad");
}
