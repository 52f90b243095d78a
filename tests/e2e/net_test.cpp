// Remote recipes and report posting end to end: the built binary against
// loopback servers that answer, stall, hang up, fail or talk nonsense.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "net/local_http_server.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using net_test::LocalHttpServer;
using net_test::Request;
using net_test::respond;

namespace {

// A remote recipe whose one setting proves it was loaded.
const std::string kRecipeV1 = "[workloads.generic.env]\nREMOTE_RECIPE_MARK = \"served-v1\"\n";
const std::string kRecipeV2 = "[workloads.generic.env]\nREMOTE_RECIPE_MARK = \"served-v2\"\n";

const std::string kPassword = "pw-Secret-4711";
const std::string kToken = "tok-Secret-0815";
const std::string kBearer = "bearer-Secret-2024";

// A simulated H100 with every package, the env file and the recipe cache in `dir`.
std::vector<std::string> base_args(const TempDir& dir) {
    return {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages", e2e::site_packages("all"),
            "--env-file",    dir.file(".env_settings"), "--json"};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

std::map<std::string, std::string> cache_env(const TempDir& dir) { return {{"PROVISION_CACHE_DIR", dir.file("cache")}}; }

struct Timed {
    e2e::Result result;
    double ms;
};

Timed timed_provision(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    const auto start = std::chrono::steady_clock::now();
    e2e::Result result = e2e::provision(args, env);
    return {std::move(result), net_test::elapsed_ms(start)};
}

std::string remote_mark(const e2e::Result& result) {
    const auto report = e2e::report(result);
    const auto& env = report["env"];
    return env.contains("REMOTE_RECIPE_MARK") ? env["REMOTE_RECIPE_MARK"].get<std::string>() : std::string();
}

std::string all_warnings(const e2e::Result& result) {
    const auto report = e2e::report(result);  // kept: a range-for does not extend a temporary's member
    std::string text;
    for (const auto& warning : report["warnings"]) text += warning.get<std::string>() + "\n";
    return text;
}

// Serves kRecipeV1 with ETag "v1", and 304 to a request that already has it.
net_test::Reply etag_server(const Request& request) {
    if (request.header("if-none-match") == "\"v1\"") return respond(304, "Not Modified", "", {"ETag: \"v1\""});
    return respond(200, "OK", kRecipeV1, {"ETag: \"v1\""});
}

struct Fault {
    const char* what;
    net_test::Handler handler;
    const char* described_as;  // words the message must hold
    bool stalls = false;       // only the fetch's limit ends it
};

std::vector<Fault> faults() {
    return {
        {"a server that stalls", [](const Request&) { return net_test::stall(); }, "within the total timeout", true},
        {"a server that drops the connection midway", [](const Request&) { return net_test::drop_midway(); },
         "connection broke"},
        {"a server that answers HTTP 500", [](const Request&) { return respond(500, "Internal Server Error"); },
         "HTTP 500"},
        {"a server that answers garbage, not HTTP", [](const Request&) { return net_test::garbage(); },
         "does not speak HTTP"},
    };
}

// A fault that only the fetch's limit ends meets a short limit, to keep
// the stall cases fast; every other fetch gets one that loopback never
// comes near, however loaded the machine.
std::vector<std::string> fetch_limit(bool stalls) { return {"--allow-http", "--fetch-timeout", stalls ? "0.5" : "20"}; }
// A run the limit ended: far sooner than a stalled server would let it.
constexpr double kStallBoundMs = 15000;

}  // namespace

TEST_CASE("a recipe served over http with --allow-http is used: its setting reaches the env file and the report") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    const auto result =
        e2e::provision(with(base_args(dir), {"--recipe", server.url("/recipe.toml"), "--allow-http"}), cache_env(dir));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(remote_mark(result) == "served-v1");
    CHECK(e2e::source_env_file(dir.file(".env_settings"), {"REMOTE_RECIPE_MARK"}).at("REMOTE_RECIPE_MARK") ==
          "served-v1");
    REQUIRE(server.requests().size() == 1);
    CHECK(server.requests()[0].method == "GET");
    CHECK(server.requests()[0].target == "/recipe.toml");
}

TEST_CASE("PROVISION_RECIPE lists URLs with ports beside files; PROVISION_ALLOW_HTTP=1 permits http") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    // A later local recipe merges over the remote one: proves both were loaded, in order.
    e2e::write_file(dir.file("local.toml"), "[workloads.generic.env]\nLOCAL_RECIPE_MARK = \"local\"\n");
    auto env = cache_env(dir);
    env["PROVISION_RECIPE"] = server.url("/a.toml") + ":" + dir.file("local.toml");
    env["PROVISION_ALLOW_HTTP"] = "1";
    const auto result = e2e::provision(base_args(dir), env);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(remote_mark(result) == "served-v1");
    CHECK(e2e::report(result)["env"]["LOCAL_RECIPE_MARK"] == "local");
    CHECK(server.requests().size() == 1);
}

TEST_CASE("a fetched recipe with a mistake: exit 3 naming line and column, and the URL it came from") {
    TempDir dir;
    LocalHttpServer server([](const Request&) {
        return respond(200, "OK", "[workloads.generic.preference]\nhopper = [\"flash3\", \"flsh2\"]\n");
    });
    const std::string url = server.url("/bad.toml?token=" + kToken);
    const auto result = e2e::provision(with(base_args(dir), {"--recipe", url, "--allow-http"}), cache_env(dir));
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains(":2:") && Catch::Contains("did you mean 'flash2'?") &&
                               Catch::Contains("(fetched from " + server.url("/bad.toml?token=***") + ")"));
    CHECK(result.err.find(kToken) == std::string::npos);
}

TEST_CASE("--allow-http=no is a usage error naming the flag: nothing is fetched, as PROVISION_ALLOW_HTTP=no refuses") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    for (const char* value : {"no", "false", "0", "yes"}) {
        INFO(value);
        const auto result = e2e::provision(
            with(base_args(dir), {fmt::format("--allow-http={}", value), "--recipe", server.url("/recipe.toml")}),
            cache_env(dir));
        CHECK(result.exit_code == 2);
        CHECK_THAT(result.err, Catch::Contains(fmt::format("--allow-http={}: --allow-http is a switch and takes no value", value)));
    }
    const auto variable = e2e::provision(with(base_args(dir), {"--recipe", server.url("/recipe.toml")}),
                                         {{"PROVISION_CACHE_DIR", dir.file("cache")}, {"PROVISION_ALLOW_HTTP", "no"}});
    CHECK(variable.exit_code == 3);
    CHECK(server.connections() == 0);
    CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
    reliability::record("settings input", "--allow-http=no (and =false, =0, =yes) with an http:// recipe",
                        "exit 2 naming --allow-http as a switch that takes no value; nothing fetched, as with "
                        "PROVISION_ALLOW_HTTP=no");
}

TEST_CASE("a plain http recipe without --allow-http is refused with exit 3 naming --allow-http") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    const auto result = e2e::provision(with(base_args(dir), {"--recipe", server.url("/recipe.toml")}), cache_env(dir));
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains("--allow-http"));
    CHECK_THAT(result.err, Catch::Contains(server.url("/recipe.toml")));
    CHECK(server.connections() == 0);
    CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
}

TEST_CASE("a second run revalidates the cached recipe by ETag: 304 and the cached copy") {
    TempDir dir;
    LocalHttpServer server(etag_server);
    const auto args = with(base_args(dir), {"--recipe", server.url("/recipe.toml"), "--allow-http"});
    const auto first = e2e::provision(args, cache_env(dir));
    REQUIRE(first.exit_code == 0);
    const auto second = e2e::provision(args, cache_env(dir));
    INFO(second.err);
    REQUIRE(second.exit_code == 0);
    CHECK(remote_mark(second) == "served-v1");
    CHECK(all_warnings(second).find("recipe") == std::string::npos);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].header("if-none-match").empty());
    CHECK(requests[1].header("if-none-match") == "\"v1\"");

    // A new version replaces the cached one.
    server.respond_with([](const Request&) { return respond(200, "OK", kRecipeV2, {"ETag: \"v2\""}); });
    CHECK(remote_mark(e2e::provision(args, cache_env(dir))) == "served-v2");
}

TEST_CASE("server down with a cached copy: the cached recipe is used with a warning, exit 0") {
    TempDir dir;
    auto server = std::make_unique<LocalHttpServer>(etag_server);
    const auto args = with(base_args(dir), {"--recipe", server->url("/recipe.toml"), "--allow-http"});
    REQUIRE(e2e::provision(args, cache_env(dir)).exit_code == 0);
    server.reset();  // nothing listens on the port any more

    const auto result = e2e::provision(args, cache_env(dir));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(remote_mark(result) == "served-v1");
    CHECK_THAT(all_warnings(result), Catch::Contains("cannot connect") && Catch::Contains("using the copy cached"));
    CHECK_THAT(result.err, Catch::Contains("  warning: cannot fetch the recipe"));
    reliability::record("network", "recipe server down, cached copy present",
                        "exit 0, cached recipe used; warning in the report and the summary");
}

TEST_CASE("server down without a cached copy: exit 3 naming the URL and the reason") {
    TempDir dir;
    const std::string url = fmt::format("http://127.0.0.1:{}/recipe.toml", net_test::unused_port());
    const auto result = e2e::provision(with(base_args(dir), {"--recipe", url, "--allow-http"}), cache_env(dir));
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains(url) && Catch::Contains("cannot connect") &&
                               Catch::Contains("no cached copy"));
    // --json: no report exists, so stdout holds the error document.
    CHECK(e2e::report(result)["error"]["exit_code"] == 3);
    CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
    reliability::record("network", "recipe server down, no cached copy",
                        "exit 3, message names the URL and the reason; env file untouched", "the run (by design)");
}

TEST_CASE("recipe server faults: the cached copy with a warning, else exit 3, always within the fetch timeout") {
    for (const Fault& fault : faults()) {
        SECTION(fault.what) {
            TempDir dir;
            LocalHttpServer server(etag_server);
            const auto args =
                with(base_args(dir), with({"--recipe", server.url("/recipe.toml")}, fetch_limit(fault.stalls)));
            const auto priming = with(base_args(dir), with({"--recipe", server.url("/recipe.toml")}, fetch_limit(false)));
            TempDir empty;
            server.respond_with(fault.handler);

            const Timed uncached = timed_provision(args, cache_env(empty));
            INFO(uncached.result.err);
            CHECK(uncached.result.exit_code == 3);
            CHECK_THAT(uncached.result.err, Catch::Contains(server.url("/recipe.toml")) &&
                                                Catch::Contains(fault.described_as));
            CHECK(uncached.ms < kStallBoundMs);

            server.respond_with(etag_server);
            REQUIRE(e2e::provision(priming, cache_env(dir)).exit_code == 0);
            server.respond_with(fault.handler);
            const Timed cached = timed_provision(args, cache_env(dir));
            INFO(cached.result.err);
            CHECK(cached.result.exit_code == 0);
            CHECK(remote_mark(cached.result) == "served-v1");
            CHECK_THAT(all_warnings(cached.result), Catch::Contains(fault.described_as));
            CHECK(cached.ms < kStallBoundMs);
            reliability::record("network", fmt::format("recipe URL: {}", fault.what),
                                fmt::format("with a cached copy: exit 0, cached recipe, warning ({}); without: "
                                            "exit 3 naming URL and reason; a stall ended by --fetch-timeout 0.5",
                                            fault.described_as),
                                "nothing with a cache; the run without one (by design)");
        }
    }
}

TEST_CASE("an oversized recipe is refused with exit 3, even with a cached copy") {
    TempDir dir;
    LocalHttpServer server(etag_server);
    const auto args = with(base_args(dir), {"--recipe", server.url("/recipe.toml"), "--allow-http"});
    REQUIRE(e2e::provision(args, cache_env(dir)).exit_code == 0);
    const std::string huge = "# padding\n" + std::string(2 << 20, '#') + "\n";
    server.respond_with([&](const Request&) { return respond(200, "OK", huge); });
    const auto result = e2e::provision(args, cache_env(dir));
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains("larger than the limit") && Catch::Contains(server.url("/recipe.toml")));
    reliability::record("network", "recipe URL serves a 2 MiB body (limit 1 MiB)",
                        "exit 3 naming the limit; the cached copy is not used in its place", "the run (by design)");
}

TEST_CASE("--report-url: a 2xx collector receives exactly the JSON report, with the configured headers") {
    TempDir dir;
    LocalHttpServer collector([](const Request&) { return respond(204, "No Content"); });
    auto env = cache_env(dir);
    env["PROVISION_REPORT_HEADER"] = "X-Fleet: pool-a\r\nAuthorization: Bearer " + kBearer + "\n";
    const auto result = e2e::provision(
        with(base_args(dir), {"--report-url", collector.url("/ingest"), "--allow-http"}), env);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto requests = collector.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/ingest");
    CHECK(requests[0].header("content-type") == "application/json");
    CHECK(requests[0].header("x-fleet") == "pool-a");
    CHECK(requests[0].header("authorization") == "Bearer " + kBearer);
    CHECK(requests[0].body == result.out);
    CHECK(e2e::report(result)["verdict"] == "ok");
    CHECK(result.err.find("report not posted") == std::string::npos);
}

TEST_CASE("--report-url posts before the handoff, and also when the run fails; the exit status is unchanged") {
    TempDir dir;
    LocalHttpServer collector([](const Request&) { return respond(200, "OK"); });
    const auto report_args = std::vector<std::string>{"--report-url", collector.url("/ingest"), "--allow-http"};
    SECTION("with a command, before it runs") {
        const std::string marker = dir.file("ran");
        const auto result = e2e::provision(
            with(base_args(dir), with(report_args, {"--", "/bin/sh", "-c", "touch \"$0\"; exit 7", marker})),
            cache_env(dir));
        CHECK(result.exit_code == 7);
        CHECK(std::filesystem::exists(marker));
        REQUIRE(collector.requests().size() == 1);
        CHECK(collector.requests()[0].body == result.out);
    }
    SECTION("a refused override: exit 4, and the failed report still reaches the collector") {
        auto env = cache_env(dir);
        env["PROVISION_ATTENTION"] = "flash3";
        const auto result = e2e::provision(
            with({"--gpu-fixture", e2e::gpu_fixture("t4"), "--site-packages", e2e::site_packages("all"), "--env-file",
                  dir.file(".env_settings"), "--json"},
                 report_args),
            env);
        CHECK(result.exit_code == 4);
        REQUIRE(collector.requests().size() == 1);
        CHECK(collector.requests()[0].body == result.out);
        CHECK(e2e::report(result)["verdict"] == "failed");
    }
}

TEST_CASE("a stalling collector does not hold up the start beyond the report budget, nor change the exit status") {
    TempDir dir;
    LocalHttpServer collector([](const Request&) { return net_test::stall(); });
    const Timed run = timed_provision(
        with(base_args(dir), {"--report-url", collector.url("/ingest"), "--allow-http", "--", "/bin/sh", "-c",
                              "exit 0"}),
        cache_env(dir));
    INFO(run.result.err);
    CHECK(run.result.exit_code == 0);
    CHECK(run.ms < kStallBoundMs);  // the report's 2 s budget ended the stall
    CHECK_THAT(run.result.err, Catch::Contains("warning: report not posted"));
    CHECK(collector.requests().size() >= 1);
    reliability::record("network", "report collector stalls",
                        "exit status unchanged, start delayed at most the 2 s budget; warning on stderr",
                        "the report");
}

TEST_CASE("a collector that answers 500 is retried; one that is down only costs a warning") {
    TempDir dir;
    SECTION("500, then 200") {
        int answered = 0;
        LocalHttpServer collector([&](const Request&) {
            return ++answered == 1 ? respond(500, "Internal Server Error") : respond(200, "OK");
        });
        const auto result = e2e::provision(
            with(base_args(dir), {"--report-url", collector.url("/ingest"), "--allow-http"}), cache_env(dir));
        CHECK(result.exit_code == 0);
        const auto requests = collector.requests();
        REQUIRE(requests.size() == 2);
        CHECK(requests[1].body == result.out);
        CHECK(result.err.find("report not posted") == std::string::npos);
        reliability::record("network", "report collector answers 500 once", "retried after a backoff; delivered");
    }
    SECTION("always 500") {
        LocalHttpServer collector([](const Request&) { return respond(500, "Internal Server Error"); });
        const auto result = e2e::provision(
            with(base_args(dir), {"--report-url", collector.url("/ingest"), "--allow-http"}), cache_env(dir));
        CHECK(result.exit_code == 0);
        CHECK(collector.requests().size() == 3);
        CHECK_THAT(result.err, Catch::Contains("report not posted") && Catch::Contains("HTTP 500"));
        reliability::record("network", "report collector always answers 500",
                            "3 attempts within the budget, then a warning; exit status unchanged", "the report");
    }
    SECTION("nothing listens") {
        const auto url = fmt::format("http://127.0.0.1:{}/ingest", net_test::unused_port());
        const auto result =
            e2e::provision(with(base_args(dir), {"--report-url", url, "--allow-http"}), cache_env(dir));
        CHECK(result.exit_code == 0);
        CHECK_THAT(result.err, Catch::Contains("report not posted to " + url));
        reliability::record("network", "report collector down", "warning; exit status unchanged", "the report");
    }
}

TEST_CASE("a plain http report URL without --allow-http is not posted; the run goes on") {
    TempDir dir;
    LocalHttpServer collector([](const Request&) { return respond(200, "OK"); });
    const auto result =
        e2e::provision(with(base_args(dir), {"--report-url", collector.url("/ingest")}), cache_env(dir));
    CHECK(result.exit_code == 0);
    CHECK(collector.connections() == 0);
    CHECK_THAT(result.err, Catch::Contains("report not posted") && Catch::Contains("--allow-http"));
}

TEST_CASE("credentials in report and recipe URLs and in report headers never appear in the output") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(500, "Internal Server Error"); });
    const std::string report_url = server.url("/ingest?access_token=" + kToken + "&host=gpu-1", "svc:" + kPassword + "@");
    const std::string recipe_url = server.url("/recipe.toml?key=" + kToken, "svc:" + kPassword + "@");
    auto env = cache_env(dir);
    env["PROVISION_REPORT_URL"] = report_url;
    env["PROVISION_REPORT_HEADER"] = "Authorization: Bearer " + kBearer;
    auto require_no_secret = [](const e2e::Result& result) {
        for (const std::string* stream : {&result.out, &result.err}) {
            CHECK(stream->find(kPassword) == std::string::npos);
            CHECK(stream->find(kToken) == std::string::npos);
            CHECK(stream->find(kBearer) == std::string::npos);
        }
    };

    SECTION("a failed report post") {
        const auto result = e2e::provision(with(base_args(dir), {"--allow-http"}), env);
        INFO(result.err);
        CHECK(result.exit_code == 0);
        CHECK_THAT(result.err, Catch::Contains("report not posted") && Catch::Contains("access_token=***"));
        REQUIRE_FALSE(server.requests().empty());
        CHECK(server.requests()[0].header("authorization") == "Bearer " + kBearer);
        require_no_secret(result);
        reliability::record("network", "failing report collector; token in URL userinfo and query, bearer header",
                            "warning shows the URL as ***@...?access_token=***; no credential on stdout or stderr");
    }
    SECTION("a failed recipe fetch, without and with a cached copy") {
        const auto uncached = e2e::provision(with(base_args(dir), {"--allow-http", "--recipe", recipe_url}), env);
        INFO(uncached.err);
        CHECK(uncached.exit_code == 3);
        CHECK_THAT(uncached.err, Catch::Contains("key=***"));
        require_no_secret(uncached);

        server.respond_with([](const Request&) { return respond(200, "OK", kRecipeV1); });
        REQUIRE(e2e::provision(with(base_args(dir), {"--allow-http", "--recipe", recipe_url}), env).exit_code == 0);
        server.respond_with([](const Request&) { return respond(503, "Service Unavailable"); });
        const auto cached = e2e::provision(with(base_args(dir), {"--allow-http", "--recipe", recipe_url}), env);
        INFO(cached.err);
        CHECK(cached.exit_code == 0);
        CHECK_THAT(all_warnings(cached), Catch::Contains("HTTP 503"));
        require_no_secret(cached);
        reliability::record("network", "failing recipe server; token in recipe URL userinfo and query",
                            "error (exit 3) and cached-copy warning show the URL as ***@...?key=***; no credential "
                            "on stdout or stderr");
    }
}

TEST_CASE("--help lists the network options") {
    const auto help = e2e::provision({"--help"});
    CHECK(help.exit_code == 0);
    for (const char* text : {"--allow-http", "--report-url", "--fetch-timeout", "PROVISION_ALLOW_HTTP",
                             "PROVISION_REPORT_URL", "PROVISION_REPORT_HEADER", "PROVISION_CACHE_DIR",
                             "PROVISION_FETCH_TIMEOUT", "https://"})
        CHECK_THAT(help.out, Catch::Contains(text));
}

TEST_CASE("libcurl is loaded only for URLs: without it a recipe URL is exit 3 and a report URL only a warning") {
    TempDir dir;
    LocalHttpServer server([](const Request&) { return respond(200, "OK", kRecipeV1); });
    auto env = cache_env(dir);
    env["PROVISION_CURL_LIBRARY"] = dir.file("no-such-libcurl.so.4");

    // No URL: libcurl is never needed, so its absence changes nothing.
    const auto local = e2e::provision(base_args(dir), env);
    INFO(local.err);
    CHECK(local.exit_code == 0);

    const auto fetched =
        e2e::provision(with(base_args(dir), {"--recipe", server.url("/recipe.toml"), "--allow-http"}), env);
    INFO(fetched.err);
    CHECK(fetched.exit_code == 3);
    CHECK(fetched.err.find("libcurl is not installed") != std::string::npos);
    CHECK(server.requests().empty());

    const auto posted =
        e2e::provision(with(base_args(dir), {"--report-url", server.url("/ingest"), "--allow-http"}), env);
    INFO(posted.err);
    CHECK(posted.exit_code == 0);
    CHECK(posted.err.find("libcurl is not installed") != std::string::npos);
    reliability::record("network", "libcurl missing: recipe URL / report URL / no URL",
                        "exit 3 naming libcurl / exit 0 with a warning / unaffected");
}
