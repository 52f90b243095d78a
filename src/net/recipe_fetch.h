// Recipes given as URLs (`--recipe https://...`): fetched with timeouts and a
// size limit, cached with ETag revalidation, and handed to the recipe loader
// as a local file.  A recipe decides what runs in the container, so the rule
// is: the fresh copy, else the cached copy with a warning, else a clear
// error -- never silently something else.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace provision {

struct FetchOptions {
    long connect_timeout_ms = 2000;
    long total_timeout_ms = 10000;
    std::size_t max_bytes = 1 << 20;
    bool allow_http = false;  // plain http:// only when the user said so (loopback tests)
    std::string cache_dir;    // default_cache_dir(environment); "" turns caching off
};

struct FetchedRecipe {
    std::string path;  // local file to load
    bool from_cache = false;
    bool temporary = false;  // `path` is a file of the temporary folder, to remove once loaded
    std::vector<std::string> warnings;  // already redacted; print them as they are
};

// http:// or https:// (any letter case): a location to fetch, not a path.
bool is_remote(const std::string& location);

// Outcomes, by what the server did:
//   200 (any 2xx)      the body; it replaces the cache entry when it parses as
//                      TOML (anything else is still handed over, so the loader
//                      reports it with line and column, but does not evict a
//                      good cached copy)
//   304                the cached copy (sent only when an ETag is cached)
//   4xx / 5xx, no answer, timeout, dropped connection, not HTTP, TLS failure
//                      the cached copy with a warning; without one,
//                      Error(invalid_input) naming the URL (redacted) and why
//   body over max_bytes  Error(invalid_input), cache or not: the server
//                      serves something that is not the recipe
//   http:// without allow_http  Error(invalid_input) naming --allow-http
// Error(io_failure) only when the body cannot be written to any file.
FetchedRecipe fetch_recipe(const std::string& url, const FetchOptions& options);

}  // namespace provision
