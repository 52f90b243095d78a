// post_report against local servers: it delivers, retries what is worth
// retrying, stays inside its time budget, and never leaks a credential.
// No verdict rests on how fast the machine is: a budget under test meets a
// collector that stalls for ever, and every other post gets a budget that
// loopback never comes near.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../net/local_http_server.h"
#include "net/report_post.h"

namespace {

using net_test::LocalHttpServer;
using net_test::Request;
using net_test::respond;
using provision::ReportPost;

const std::string kPassword = "pw-Secret-4711";
const std::string kToken = "tok-Secret-0815";
const std::string kBearer = "bearer-Secret-2024";
const std::string kReport = R"({"schema":1,"workload":"generic","verdict":"ok"})";

// A budget loopback never comes near, however loaded the machine, unless a
// test is about the budget itself.
ReportPost post_to(const std::string& url, long budget_ms = 20000) {
    ReportPost post;
    post.url = url;
    post.headers = {"Authorization: Bearer " + kBearer};
    post.budget_ms = budget_ms;
    post.allow_http = true;  // the test servers are plain http on loopback
    return post;
}

std::string secret_url(const LocalHttpServer& server, const std::string& scheme = "http") {
    return server.url("/ingest?access_token=" + kToken + "&host=gpu-1", "svc:" + kPassword + "@", scheme);
}

void require_no_secret(const std::vector<std::string>& warnings) {
    for (const std::string& warning : warnings) {
        INFO(warning);
        CHECK(warning.find(kPassword) == std::string::npos);
        CHECK(warning.find(kToken) == std::string::npos);
        CHECK(warning.find(kBearer) == std::string::npos);
    }
}

struct Timed {
    std::vector<std::string> warnings;
    double ms;
};

Timed timed_post(const ReportPost& post, const std::string& json = kReport) {
    const auto start = std::chrono::steady_clock::now();
    auto warnings = provision::post_report(post, json);
    return {std::move(warnings), net_test::elapsed_ms(start)};
}

}  // namespace

TEST_CASE("post_report POSTs the JSON with its content type and the given headers") {
    LocalHttpServer server([](const Request&) { return respond(202, "Accepted"); });
    const Timed result = timed_post(post_to(secret_url(server)));
    CHECK(result.warnings.empty());
    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].target == "/ingest?access_token=" + kToken + "&host=gpu-1");
    CHECK(requests[0].header("content-type") == "application/json");
    CHECK(requests[0].header("authorization") == "Bearer " + kBearer);
    CHECK(requests[0].body == kReport);
}

TEST_CASE("post_report sends a large report at once, without waiting for 100 Continue") {
    LocalHttpServer server([](const Request&) { return respond(200, "OK"); });
    const std::string big = R"({"notes":")" + std::string(64 * 1024, 'n') + R"("})";
    const Timed result = timed_post(post_to(server.url("/ingest")), big);
    CHECK(result.warnings.empty());
    REQUIRE(server.requests().size() == 1);
    CHECK(server.requests()[0].header("expect").empty());
    CHECK(server.requests()[0].body == big);
}

TEST_CASE("post_report retries a 5xx and succeeds when the collector recovers") {
    int answered = 0;
    LocalHttpServer server([&](const Request&) {
        return ++answered == 1 ? respond(503, "Service Unavailable") : respond(200, "OK");
    });
    const Timed result = timed_post(post_to(secret_url(server)));
    CHECK(result.warnings.empty());
    CHECK(server.requests().size() == 2);
}

TEST_CASE("post_report gives up after its attempts on a persistent 500, with a warning") {
    LocalHttpServer server([](const Request&) { return respond(500, "Internal Server Error", "no"); });
    const Timed result = timed_post(post_to(secret_url(server)));
    CHECK(server.requests().size() == 3);
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("report not posted to http://***@127.0.0.1:"));
    CHECK_THAT(result.warnings[0], Catch::Contains("access_token=***&host=gpu-1"));
    CHECK_THAT(result.warnings[0], Catch::Contains("HTTP 500 (after 3 attempts"));
    require_no_secret(result.warnings);
}

TEST_CASE("post_report does not retry a 4xx") {
    LocalHttpServer server([](const Request&) { return respond(401, "Unauthorized"); });
    const Timed result = timed_post(post_to(secret_url(server)));
    CHECK(server.requests().size() == 1);
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("HTTP 401 (after 1 attempt,"));
    require_no_secret(result.warnings);
}

TEST_CASE("post_report against a stalled collector returns within its budget") {
    LocalHttpServer server([](const Request&) { return net_test::stall(); });
    const long budget_ms = 800;
    const Timed result = timed_post(post_to(secret_url(server), budget_ms));
    CHECK(result.ms >= budget_ms - 100);   // it did wait for an answer...
    CHECK(result.ms < budget_ms + 10000);  // ...until the budget ended it, not for ever
    CHECK(server.connections() == 1);     // no time was left for a second attempt
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("no complete answer within the total timeout"));
    require_no_secret(result.warnings);
}

TEST_CASE("post_report with the default budget of two seconds ends against a stalled collector") {
    LocalHttpServer server([](const Request&) { return net_test::stall(); });
    ReportPost post = post_to(secret_url(server), ReportPost{}.budget_ms);
    REQUIRE(post.budget_ms == 2000);
    const Timed result = timed_post(post);
    CHECK(result.ms >= 2000 - 100);
    CHECK(result.ms < 2000 + 10000);
    CHECK(result.warnings.size() == 1);
}

TEST_CASE("post_report retries a refused connection with backoff, inside the budget") {
    const std::string url =
        "http://svc:" + kPassword + "@127.0.0.1:" + std::to_string(net_test::unused_port()) + "/ingest?token=" + kToken;
    const Timed result = timed_post(post_to(url));
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("after 3 attempts"));
    require_no_secret(result.warnings);
    CHECK(result.ms >= 300 - 50);  // the two backoffs, 100 ms and 200 ms
}

TEST_CASE("post_report retries a connection closed without an answer") {
    LocalHttpServer server([](const Request&) { return net_test::Reply{"", false}; });
    const Timed result = timed_post(post_to(secret_url(server)));
    CHECK(server.requests().size() == 3);
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("closed the connection without answering"));
    require_no_secret(result.warnings);
}

TEST_CASE("post_report ignores the size of the collector's answer") {
    LocalHttpServer server([](const Request&) { return net_test::chunked(std::string(3 << 20, 'a')); });
    const Timed result = timed_post(post_to(server.url("/ingest")));
    CHECK(result.warnings.empty());
    CHECK(server.requests().size() == 1);
}

TEST_CASE("post_report turns a collector that speaks garbage or drops midway into one warning") {
    SECTION("garbage") {
        LocalHttpServer server([](const Request&) { return net_test::garbage(); });
        const Timed result = timed_post(post_to(secret_url(server)));
        CHECK(server.requests().size() == 1);  // a peer that speaks no HTTP is not asked again
        REQUIRE(result.warnings.size() == 1);
        CHECK_THAT(result.warnings[0], Catch::Contains("does not speak HTTP"));
        require_no_secret(result.warnings);
    }
    SECTION("dropped midway") {
        LocalHttpServer server([](const Request&) { return net_test::drop_midway(); });
        const Timed result = timed_post(post_to(secret_url(server)));
        // A 200 status line arrived: the report was accepted, whatever the rest of the answer.
        CHECK(result.warnings.empty());
        CHECK(server.requests().size() == 1);
    }
}

TEST_CASE("post_report over https to a plain-http server warns of the TLS failure") {
    LocalHttpServer server([](const Request&) { return respond(200, "OK"); });
    const Timed result = timed_post(post_to(secret_url(server, "https")));
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("https://***@127.0.0.1:"));
    CHECK_THAT(result.warnings[0], Catch::Contains("TLS handshake failed"));
    require_no_secret(result.warnings);
}

TEST_CASE("post_report refuses plain http unless allowed, naming the switch, and sends nothing") {
    LocalHttpServer server([](const Request&) { return respond(200, "OK"); });
    ReportPost post = post_to(secret_url(server));
    post.allow_http = false;
    const Timed result = timed_post(post);
    REQUIRE(result.warnings.size() == 1);
    CHECK_THAT(result.warnings[0], Catch::Contains("--allow-http"));
    CHECK_THAT(result.warnings[0], Catch::Contains("PROVISION_ALLOW_HTTP=1"));
    require_no_secret(result.warnings);
    CHECK(server.connections() == 0);
}

TEST_CASE("post_report drops a malformed header with a warning that does not repeat it") {
    LocalHttpServer server([](const Request&) { return respond(200, "OK"); });
    ReportPost post = post_to(server.url("/ingest"));
    post.headers = {"Bearer " + kBearer, "X-Fleet: gpu\r\nInjected: yes", "X-Fleet: eu-west"};
    const Timed result = timed_post(post);
    REQUIRE(result.warnings.size() == 2);
    require_no_secret(result.warnings);
    REQUIRE(server.requests().size() == 1);
    const Request request = server.requests()[0];
    CHECK(request.header("x-fleet") == "eu-west");
    CHECK(request.header("injected").empty());
    CHECK(request.header("authorization").empty());
}

TEST_CASE("post_report never throws, even for a URL that is not one") {
    std::vector<std::string> warnings;
    REQUIRE_NOTHROW(warnings = provision::post_report(post_to("::not a url token=" + kToken), kReport));
    REQUIRE(warnings.size() == 1);
    require_no_secret(warnings);
}

TEST_CASE("report_headers_from reads one 'Name: value' per line of PROVISION_REPORT_HEADER") {
    using provision::report_headers_from;
    CHECK(report_headers_from("").empty());
    CHECK(report_headers_from("\n \n\t\n").empty());
    CHECK(report_headers_from("Authorization: Bearer abc") == std::vector<std::string>{"Authorization: Bearer abc"});
    CHECK(report_headers_from("X-A: 1\r\nX-B: two words\n\nX-C:3\n") ==
          std::vector<std::string>{"X-A: 1", "X-B: two words", "X-C:3"});
    // A line that is not a header is kept, so post_report can refuse it with a warning.
    CHECK(report_headers_from("not a header\nX-A: 1") == std::vector<std::string>{"not a header", "X-A: 1"});
}
