#include "net/report_post.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "core/text.h"
#include "net/http_client.h"
#include "net/recipe_fetch.h"
#include "net/redaction.h"

namespace provision {
namespace {

using Clock = std::chrono::steady_clock;

constexpr long kConnectTimeoutMs = 500;
constexpr long kFirstBackoffMs = 100;
// An attempt with less time than this left could not even connect: skip it.
constexpr long kShortestAttemptMs = 50;

// "Name: value" with a token-like name and no line break that would start
// a second header.
bool well_formed_header(const std::string& header) {
    const std::size_t colon = header.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    if (header.find_first_of("\r\n") != std::string::npos) return false;
    return std::all_of(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(colon), [](unsigned char c) {
        return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
                                      std::string_view::npos;
    });
}

bool worth_retrying(const HttpResponse& response) {
    switch (response.transport) {
    case Transport::ok:
        return response.status == 429 || response.status >= 500;
    case Transport::connect_failed:
        return true;
    case Transport::timed_out:
        return !response.connected;
    case Transport::empty_reply:
        return true;  // closed before any answer: often a restarting collector or a stale proxy connection
    default:
        return false;
    }
}

std::vector<std::string> post_within_budget(const ReportPost& post, const std::string& json) {
    const std::string shown = printable(redact_url(post.url), kLongestPath);
    if (!is_remote(post.url))
        return {fmt::format("report not posted: {} is not an https:// URL", shown)};
    if (is_plain_http(post.url) && !post.allow_http)
        return {fmt::format("report not posted to {}: plain http is refused (the report and any token would travel "
                            "in clear); pass {} (or set {}) to allow it",
                            shown, kAllowHttpFlag, kAllowHttpVariable)};

    HttpRequest request;
    request.url = post.url;
    request.post_body = json;
    request.follow_redirects = false;  // a moved collector is a configuration error, and a redirect would drop the body
    request.allow_http = post.allow_http;
    request.keep_body = false;  // the collector's answer is not read
    request.headers.push_back("Content-Type: application/json");
    std::vector<std::string> warnings;
    for (const std::string& header : post.headers) {
        if (well_formed_header(header))
            request.headers.push_back(header);
        else
            warnings.push_back("a report header is not of the form 'Name: value'; it is not sent");
    }

    const SecretScrubber scrubber(post.url, post.headers);
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(0L, post.budget_ms));
    const auto left_ms = [&] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    };
    const int attempts = std::max(1, post.attempts);
    long backoff_ms = kFirstBackoffMs;
    std::string last_failure = "the time budget was spent before the first attempt";
    int made = 0;
    while (made < attempts && left_ms() >= kShortestAttemptMs) {
        request.total_timeout_ms = left_ms();
        request.connect_timeout_ms = std::min(kConnectTimeoutMs, request.total_timeout_ms);
        const HttpResponse response = perform(request);
        ++made;
        // A 2xx status line means the collector took the report, even when its
        // answer is cut short afterwards.
        const bool accepted = response.status >= 200 && response.status < 300 &&
                              (response.transport == Transport::ok || response.transport == Transport::broken_response);
        if (accepted) return warnings;
        last_failure = scrubber.scrub(describe_failure(response, request));
        if (!worth_retrying(response) || made == attempts) break;
        if (left_ms() < backoff_ms + kShortestAttemptMs) break;  // no time left for a fair retry
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
        backoff_ms *= 2;
    }
    warnings.push_back(fmt::format("report not posted to {}: {} (after {} attempt{}, {} ms budget)", shown,
                                   last_failure, made, made == 1 ? "" : "s", post.budget_ms));
    return warnings;
}

}  // namespace

std::vector<std::string> report_headers_from(const std::string& text) {
    std::vector<std::string> headers;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) headers.push_back(std::move(line));
        start = end + 1;
    }
    return headers;
}

std::vector<std::string> post_report(const ReportPost& post, const std::string& json) {
    try {
        return post_within_budget(post, json);
    } catch (const std::exception& error) {
        return {fmt::format("report not posted to {}: {}", echoed_path(redact_url(post.url)), error.what())};
    } catch (...) {
        return {fmt::format("report not posted to {}", echoed_path(redact_url(post.url)))};
    }
}

}  // namespace provision
