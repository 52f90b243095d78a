// fetch_recipe against local servers that answer, stall, drop, fail, or
// speak no HTTP; every message is checked for leaked credentials.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <toml++/toml.h>

#include "../net/local_http_server.h"
#include "core/error.h"
#include "net/recipe_cache.h"
#include "net/recipe_fetch.h"
#include "test_support.h"

namespace {

using net_test::LocalHttpServer;
using net_test::Request;
using net_test::respond;
using provision::ExitCode;
using provision::FetchedRecipe;
using provision::FetchOptions;

const std::string kPassword = "pw-Secret-4711";
const std::string kToken = "tok-Secret-0815";
const std::string kRecipeV1 = "[workloads.remote]\ndescription = \"fetched v1\"\n";
const std::string kRecipeV2 = "[workloads.remote]\ndescription = \"fetched v2\"\n";

// The recipe URL on `server`, with credentials in the userinfo and the query.
std::string secret_url(const LocalHttpServer& server, const std::string& scheme = "http") {
    return server.url("/recipes/remote.toml?token=" + kToken + "&v=1", "alice:" + kPassword + "@", scheme);
}

void require_no_secret(const std::string& text) {
    INFO(text);
    CHECK(text.find(kPassword) == std::string::npos);
    CHECK(text.find(kToken) == std::string::npos);
}

FetchOptions options_for(const test_support::TempDir& cache) {
    FetchOptions options;
    options.allow_http = true;  // the test servers are plain http on loopback
    options.cache_dir = cache.path();
    // Limits loopback never comes near, however loaded the machine; the
    // stall cases set a short one of their own.
    options.connect_timeout_ms = 10000;
    options.total_timeout_ms = 20000;
    return options;
}

// What a run the total timeout ended may take beyond it: far less than a
// stalled server would hold it (for ever).
constexpr double kSlackMs = 10000;

provision::Error fetch_error(const std::string& url, const FetchOptions& options) {
    try {
        const FetchedRecipe fetched = provision::fetch_recipe(url, options);
        FAIL("expected an error, got the recipe at " << fetched.path);
    } catch (const provision::Error& error) {
        return error;
    }
    throw std::logic_error("unreachable");
}

// Serves kRecipeV1 with ETag "v1", and 304 to a request that already has it.
net_test::Reply etag_server(const Request& request) {
    if (request.header("if-none-match") == "\"v1\"") return respond(304, "Not Modified", "", {"ETag: \"v1\""});
    return respond(200, "OK", kRecipeV1, {"ETag: \"v1\""});
}

struct Failure {
    const char* what;
    net_test::Handler handler;
    const char* described_as;  // words the message must hold
    bool stalls = false;       // only the total timeout ends it
};

std::vector<Failure> failures() {
    return {
        {"a stalled server", [](const Request&) { return net_test::stall(); }, "total timeout of 700 ms", true},
        {"a connection dropped midway", [](const Request&) { return net_test::drop_midway(); },
         "connection broke"},
        {"a connection closed without an answer", [](const Request&) { return net_test::Reply{"", false}; },
         "closed the connection without answering"},
        {"HTTP 500", [](const Request&) { return respond(500, "Internal Server Error", "boom"); }, "HTTP 500"},
        {"HTTP 404", [](const Request&) { return respond(404, "Not Found", "gone"); }, "HTTP 404"},
        {"garbage instead of HTTP", [](const Request&) { return net_test::garbage(); }, "does not speak HTTP"},
    };
}

}  // namespace

TEST_CASE("fetch_recipe caches a 200 with its ETag and revalidates it with If-None-Match") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const std::string url = secret_url(server);

    const FetchedRecipe first = provision::fetch_recipe(url, options_for(cache));
    CHECK_FALSE(first.from_cache);
    CHECK(first.warnings.empty());
    CHECK(test_support::read_file(first.path) == kRecipeV1);
    CHECK(first.path.rfind(cache.path(), 0) == 0);

    const FetchedRecipe second = provision::fetch_recipe(url, options_for(cache));
    CHECK(second.from_cache);
    CHECK(second.warnings.empty());
    CHECK(second.path == first.path);
    CHECK(test_support::read_file(second.path) == kRecipeV1);

    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].header("if-none-match").empty());
    CHECK(requests[1].header("if-none-match") == "\"v1\"");
    CHECK(requests[1].target == "/recipes/remote.toml?token=" + kToken + "&v=1");
}

TEST_CASE("fetch_recipe replaces the cached copy when the server sends a new version") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const std::string url = secret_url(server);
    provision::fetch_recipe(url, options_for(cache));

    server.respond_with([](const Request&) { return respond(200, "OK", kRecipeV2, {"ETag: \"v2\""}); });
    const FetchedRecipe updated = provision::fetch_recipe(url, options_for(cache));
    CHECK_FALSE(updated.from_cache);
    CHECK(test_support::read_file(updated.path) == kRecipeV2);

    server.respond_with([](const Request& request) {
        return request.header("if-none-match") == "\"v2\"" ? respond(304, "Not Modified")
                                                           : respond(500, "Internal Server Error");
    });
    const FetchedRecipe revalidated = provision::fetch_recipe(url, options_for(cache));
    CHECK(revalidated.from_cache);
    CHECK(revalidated.warnings.empty());
    CHECK(test_support::read_file(revalidated.path) == kRecipeV2);
}

TEST_CASE("fetch_recipe falls back to the cached copy with a warning when the server fails") {
    for (const Failure& failure : failures()) {
        SECTION(failure.what) {
            test_support::TempDir cache;
            LocalHttpServer server(etag_server);
            const std::string url = secret_url(server);
            const FetchedRecipe primed = provision::fetch_recipe(url, options_for(cache));
            FetchOptions options = options_for(cache);
            if (failure.stalls) options.total_timeout_ms = 700;

            server.respond_with(failure.handler);
            const auto start = std::chrono::steady_clock::now();
            const FetchedRecipe fetched = provision::fetch_recipe(url, options);
            const double elapsed = net_test::elapsed_ms(start);

            CHECK(fetched.from_cache);
            CHECK(fetched.path == primed.path);
            CHECK(test_support::read_file(fetched.path) == kRecipeV1);
            REQUIRE(fetched.warnings.size() == 1);
            const std::string& warning = fetched.warnings[0];
            CHECK_THAT(warning, Catch::Contains("cannot fetch the recipe"));
            CHECK_THAT(warning, Catch::Contains(failure.described_as));
            CHECK_THAT(warning, Catch::Contains("using the copy cached at"));
            CHECK_THAT(warning, Catch::Contains("token=***"));
            require_no_secret(warning);
            CHECK(elapsed < options.total_timeout_ms + kSlackMs);  // the total timeout bounds even the stall
        }
    }
}

TEST_CASE("fetch_recipe without a cached copy fails with exit 3 and says why") {
    for (const Failure& failure : failures()) {
        SECTION(failure.what) {
            test_support::TempDir cache;
            LocalHttpServer server(failure.handler);
            FetchOptions options = options_for(cache);
            if (failure.stalls) options.total_timeout_ms = 700;

            const auto start = std::chrono::steady_clock::now();
            const provision::Error error = fetch_error(secret_url(server), options);
            const double elapsed = net_test::elapsed_ms(start);

            CHECK(error.code() == ExitCode::invalid_input);
            const std::string message = error.what();
            CHECK_THAT(message, Catch::Contains("cannot fetch the recipe http://***@127.0.0.1:"));
            CHECK_THAT(message, Catch::Contains(failure.described_as));
            CHECK_THAT(message, Catch::Contains("no cached copy exists in " + cache.path()));
            require_no_secret(message);
            CHECK(elapsed < options.total_timeout_ms + kSlackMs);
        }
    }
}

TEST_CASE("fetch_recipe gives up on a stalled server at the total timeout") {
    test_support::TempDir cache;
    LocalHttpServer server([](const Request&) { return net_test::stall(); });
    FetchOptions options = options_for(cache);
    options.total_timeout_ms = 500;

    const auto start = std::chrono::steady_clock::now();
    const provision::Error error = fetch_error(secret_url(server), options);
    const double elapsed = net_test::elapsed_ms(start);

    CHECK(error.code() == ExitCode::invalid_input);
    CHECK(server.connections() == 1);
    CHECK(elapsed >= 450);             // it waited for the answer...
    CHECK(elapsed < 500 + kSlackMs);   // ...until the limit ended it, not for ever
}

TEST_CASE("fetch_recipe refuses a body over the size limit even when a cached copy exists") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const std::string url = secret_url(server);
    FetchOptions options = options_for(cache);
    options.max_bytes = 4096;
    const FetchedRecipe primed = provision::fetch_recipe(url, options);
    const std::string oversized = "# " + std::string(options.max_bytes, 'x') + "\n";

    SECTION("announced by Content-Length") {
        server.respond_with([&](const Request&) { return respond(200, "OK", oversized, {"ETag: \"big\""}); });
    }
    SECTION("chunked, so only the reader can tell") {
        server.respond_with([&](const Request&) { return net_test::chunked(oversized); });
    }
    const provision::Error error = fetch_error(url, options);
    CHECK(error.code() == ExitCode::invalid_input);
    CHECK_THAT(error.what(), Catch::Contains("larger than the limit of 4096 bytes"));
    CHECK_THAT(error.what(), Catch::Contains("the cached copy is not used"));
    require_no_secret(error.what());
    CHECK(test_support::read_file(primed.path) == kRecipeV1);  // the cache is untouched
}

TEST_CASE("fetch_recipe accepts a body exactly at the size limit") {
    test_support::TempDir cache;
    FetchOptions options = options_for(cache);
    options.max_bytes = 1000;
    const std::string body = "# " + std::string(options.max_bytes - 3, 'y') + "\n";
    REQUIRE(body.size() == options.max_bytes);
    LocalHttpServer server([&](const Request&) { return net_test::chunked(body); });
    CHECK(test_support::read_file(provision::fetch_recipe(server.url("/r.toml"), options).path) == body);
}

TEST_CASE("fetch_recipe hands a non-TOML body to the loader but keeps the good cached copy") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const std::string url = secret_url(server);
    const FetchedRecipe primed = provision::fetch_recipe(url, options_for(cache));

    const std::string garbage = "<html><body>Login required</body></html>";
    server.respond_with([&](const Request&) { return respond(200, "OK", garbage, {"ETag: \"html\""}); });
    const FetchedRecipe fetched = provision::fetch_recipe(url, options_for(cache));
    CHECK_FALSE(fetched.from_cache);
    CHECK(fetched.path != primed.path);
    CHECK(test_support::read_file(fetched.path) == garbage);  // the loader reports it with line and column

    server.respond_with([](const Request& request) {
        // The cache still revalidates with the good copy's ETag.
        return request.header("if-none-match") == "\"v1\"" ? respond(304, "Not Modified")
                                                           : respond(500, "Internal Server Error");
    });
    const FetchedRecipe after = provision::fetch_recipe(url, options_for(cache));
    CHECK(after.from_cache);
    CHECK(after.warnings.empty());
    CHECK(test_support::read_file(after.path) == kRecipeV1);
}

TEST_CASE("fetch_recipe over https to a plain-http server fails cleanly with a TLS error") {
    test_support::TempDir cache;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    const auto start = std::chrono::steady_clock::now();
    const provision::Error error = fetch_error(secret_url(server, "https"), options_for(cache));
    CHECK(net_test::elapsed_ms(start) < kSlackMs);  // the handshake failed; no limit had to end it
    CHECK(error.code() == ExitCode::invalid_input);
    CHECK_THAT(error.what(), Catch::Contains("TLS"));
    CHECK_THAT(error.what(), Catch::Contains("https://***@127.0.0.1:"));
    require_no_secret(error.what());
}

TEST_CASE("fetch_recipe refuses plain http unless allowed, naming the switch, and sends nothing") {
    test_support::TempDir cache;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    FetchOptions options = options_for(cache);
    options.allow_http = false;
    const provision::Error error = fetch_error(secret_url(server), options);
    CHECK(error.code() == ExitCode::invalid_input);
    CHECK_THAT(error.what(), Catch::Contains("plain http"));
    CHECK_THAT(error.what(), Catch::Contains("--allow-http"));
    CHECK_THAT(error.what(), Catch::Contains("PROVISION_ALLOW_HTTP=1"));
    require_no_secret(error.what());
    CHECK(server.connections() == 0);
}

TEST_CASE("fetch_recipe reports a refused connection without a cache") {
    test_support::TempDir cache;
    const std::string url = "http://127.0.0.1:" + std::to_string(net_test::unused_port()) + "/r.toml?token=" + kToken;
    const provision::Error error = fetch_error(url, options_for(cache));
    CHECK(error.code() == ExitCode::invalid_input);
    CHECK_THAT(error.what(), Catch::Contains("cannot connect"));
    require_no_secret(error.what());
}

TEST_CASE("fetch_recipe treats a 304 to an unconditional request as a failure") {
    test_support::TempDir cache;
    LocalHttpServer server([](const Request&) { return respond(304, "Not Modified"); });
    const provision::Error error = fetch_error(secret_url(server), options_for(cache));
    CHECK_THAT(error.what(), Catch::Contains("304"));
    CHECK_THAT(error.what(), Catch::Contains("no cached copy exists"));
}

TEST_CASE("fetch_recipe stores the cache entry privately and without credentials") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const FetchedRecipe fetched = provision::fetch_recipe(secret_url(server), options_for(cache));
    const std::string meta = fetched.path.substr(0, fetched.path.size() - 5) + ".meta";
    REQUIRE(std::filesystem::exists(meta));
    const std::string text = test_support::read_file(meta);
    CHECK_THAT(text, Catch::Contains("token=***"));
    CHECK(toml::parse(text)["etag"].value_or(std::string()) == "\"v1\"");
    require_no_secret(text);
    for (const std::string& path : {fetched.path, meta}) {
        struct stat info{};
        REQUIRE(::stat(path.c_str(), &info) == 0);
        CHECK((info.st_mode & 0777) == 0600);
    }
    // No temporary files are left behind.
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(fetched.path).parent_path())) {
        (void)entry;
        ++files;
    }
    CHECK(files == 2);
}

TEST_CASE("fetch_recipe does not revalidate with metadata that does not match the cached body") {
    test_support::TempDir cache;
    LocalHttpServer server(etag_server);
    const std::string url = secret_url(server);
    const FetchedRecipe fetched = provision::fetch_recipe(url, options_for(cache));
    test_support::write_file(fetched.path, "[workloads.remote]\ndescription = \"edited by hand\"\n");

    const FetchedRecipe again = provision::fetch_recipe(url, options_for(cache));
    CHECK_FALSE(again.from_cache);
    CHECK(test_support::read_file(again.path) == kRecipeV1);
    REQUIRE(server.requests().size() == 2);
    CHECK(server.requests()[1].header("if-none-match").empty());
}

TEST_CASE("fetch_recipe with caching off works and fails without a fallback") {
    LocalHttpServer server(etag_server);
    FetchOptions options;
    options.allow_http = true;
    const FetchedRecipe fetched = provision::fetch_recipe(server.url("/r.toml"), options);
    CHECK(test_support::read_file(fetched.path) == kRecipeV1);
    CHECK(fetched.warnings.empty());
    std::filesystem::remove(fetched.path);

    server.respond_with([](const Request&) { return respond(503, "Service Unavailable"); });
    const provision::Error error = fetch_error(server.url("/r.toml"), options);
    CHECK_THAT(error.what(), Catch::Contains("HTTP 503"));
    CHECK_THAT(error.what(), Catch::Contains("caching is off"));
}

TEST_CASE("fetch_recipe uses the recipe uncached, with a warning, when the cache cannot be written") {
    test_support::TempDir scratch;
    test_support::write_file(scratch.file("not-a-folder"), "x");
    LocalHttpServer server(etag_server);
    FetchOptions options;
    options.allow_http = true;
    options.cache_dir = scratch.file("not-a-folder") + "/cache";
    const FetchedRecipe fetched = provision::fetch_recipe(secret_url(server), options);
    CHECK(test_support::read_file(fetched.path) == kRecipeV1);
    REQUIRE(fetched.warnings.size() == 1);
    CHECK_THAT(fetched.warnings[0], Catch::Contains("could not be cached"));
    require_no_secret(fetched.warnings[0]);
    std::filesystem::remove(fetched.path);
}

TEST_CASE("default_cache_dir: XDG_CACHE_HOME, then HOME, then /var/cache") {
    using provision::default_cache_dir;
    CHECK(default_cache_dir("/x", "/home/u") == "/x/provision");
    CHECK(default_cache_dir("relative", "/home/u") == "/home/u/.cache/provision");
    CHECK(default_cache_dir("", "/root") == "/root/.cache/provision");
    CHECK(default_cache_dir("", "/") == "/var/cache/provision");
    CHECK(default_cache_dir("", "") == "/var/cache/provision");
}
