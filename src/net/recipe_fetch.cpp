#include "net/recipe_fetch.h"

#include <cctype>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/error.h"
#include "core/text.h"
#include "net/http_client.h"
#include "net/recipe_cache.h"
#include "net/redaction.h"
#include "toml/toml_reader.h"

namespace provision {
namespace {

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
    return true;
}

bool is_toml(const std::string& body) {
    try {
        (void)parse_toml(body, "the fetched recipe");
        return true;
    } catch (const Error&) {
        return false;
    }
}

}  // namespace

bool is_remote(const std::string& location) {
    return starts_with_ignoring_case(location, "http://") || starts_with_ignoring_case(location, "https://");
}

FetchedRecipe fetch_recipe(const std::string& url, const FetchOptions& options) {
    const std::string shown = printable(redact_url(url), kLongestPath);
    if (!is_remote(url))
        throw Error(ExitCode::invalid_input, fmt::format("the recipe location {} is not an https:// URL", shown));
    if (is_plain_http(url) && !options.allow_http)
        throw Error(ExitCode::invalid_input,
                    fmt::format("refusing to fetch the recipe {} over plain http: a recipe decides what runs, so "
                                "it must come over https; pass {} (or set {}) to allow http",
                                shown, kAllowHttpFlag, kAllowHttpVariable));

    const RecipeCache cache(options.cache_dir);
    const std::optional<CachedRecipe> cached = cache.find(url);

    HttpRequest request;
    request.url = url;
    request.connect_timeout_ms = options.connect_timeout_ms;
    request.total_timeout_ms = options.total_timeout_ms;
    request.max_body_bytes = options.max_bytes;
    request.allow_http = options.allow_http;
    if (cached && !cached->etag.empty()) request.headers.push_back("If-None-Match: " + cached->etag);
    const HttpResponse response = perform(request);

    FetchedRecipe fetched;
    if (response.transport == Transport::too_large)
        throw Error(ExitCode::invalid_input,
                    fmt::format("the recipe {} is larger than the limit of {} bytes; refusing it{}", shown,
                                options.max_bytes, cached ? " (the cached copy is not used in its place)" : ""));

    const bool answered = response.transport == Transport::ok;
    if (answered && response.status == 304 && cached && cached->refused.empty()) {
        fetched.path = cached->path;
        fetched.from_cache = true;
        return fetched;
    }
    if (answered && response.status >= 200 && response.status < 300) {
        if (is_toml(response.body)) {
            try {
                fetched.path = cache.store(url, response.body, response.etag);
                return fetched;
            } catch (const Error& error) {
                if (cache.enabled())
                    fetched.warnings.push_back(
                        fmt::format("the recipe {} could not be cached ({}); it is used uncached", shown, error.what()));
            }
        }
        fetched.path = cache.store_unverified(url, response.body, fetched.temporary);
        return fetched;
    }

    const SecretScrubber scrubber(url, request.headers);
    const std::string why = scrubber.scrub(response.status == 304 && answered
                                               ? std::string("the server answered 304 Not Modified to a request "
                                                             "that was not conditional")
                                               : describe_failure(response, request));
    if (cached && !cached->refused.empty())
        throw Error(ExitCode::invalid_input,
                    fmt::format("cannot fetch the recipe {}: {}; the cached copy at {} is refused: {}", shown, why,
                                cached->path, cached->refused));
    if (cached) {
        fetched.path = cached->path;
        fetched.from_cache = true;
        fetched.warnings.push_back(fmt::format("cannot fetch the recipe {}: {}; using the copy cached at {} ({})",
                                               shown, why, cached->fetched_at, cached->path));
        return fetched;
    }
    throw Error(ExitCode::invalid_input,
                fmt::format("cannot fetch the recipe {}: {}; no cached copy exists{}", shown, why,
                            cache.enabled() ? fmt::format(" in {}", cache.folder()) : " (caching is off)"));
}

}  // namespace provision
