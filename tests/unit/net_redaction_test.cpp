#include <catch2/catch.hpp>

#include "net/redaction.h"
#include "net/recipe_fetch.h"

using provision::redact_url;
using provision::SecretScrubber;

TEST_CASE("redact_url masks the userinfo, user and password alike") {
    CHECK(redact_url("https://alice:s3cr3t-pass@example.com/r.toml") == "https://***@example.com/r.toml");
    CHECK(redact_url("https://ghp_tokenonly@example.com/r.toml") == "https://***@example.com/r.toml");
}

TEST_CASE("redact_url masks credential-like query parameters and keeps the rest") {
    const std::string shown =
        redact_url("https://example.com/report?token=abc123&key=k3y&access_token=at&sig=s1g&api_key=ak"
                   "&X-Amz-Signature=deadbeef&host=gpu-7&v=2");
    CHECK(shown == "https://example.com/report?token=***&key=***&access_token=***&sig=***&api_key=***"
                   "&X-Amz-Signature=***&host=gpu-7&v=2");
}

TEST_CASE("redact_url matches parameter names regardless of case and masks the fragment too") {
    CHECK(redact_url("https://example.com/?TOKEN=abc#access_token=xyz&state=1") ==
          "https://example.com/?TOKEN=***#access_token=***&state=1");
}

TEST_CASE("redact_url leaves a URL without credentials as it was") {
    CHECK(redact_url("https://example.com:8443/recipes/comfyui.toml?v=3") ==
          "https://example.com:8443/recipes/comfyui.toml?v=3");
}

TEST_CASE("redact_url of a URL libcurl rejects keeps only the scheme and host") {
    const std::string shown = redact_url("https://user:pw-secret@exa mple.com/path?token=t0ken-value");
    CHECK(shown.find("pw-secret") == std::string::npos);
    CHECK(shown.find("t0ken-value") == std::string::npos);
    CHECK(shown.rfind("https://***@", 0) == 0);
    CHECK(redact_url("not a url at all ?token=zzz") == "(unparseable URL)");
}

TEST_CASE("SecretScrubber masks URL credentials and header values in free text") {
    const SecretScrubber scrubber("https://bob:pa55word@example.com/x?token=tok-123456&v=1",
                                  {"Authorization: Bearer eyJhbGciOi.secret", "X-Api-Key: key-0987654321"});
    const std::string scrubbed = scrubber.scrub(
        "failed for bob:pa55word, tok-123456, eyJhbGciOi.secret and key-0987654321 (HTTP 500, v=1)");
    for (const char* secret : {"pa55word", "tok-123456", "eyJhbGciOi.secret", "key-0987654321"})
        CHECK(scrubbed.find(secret) == std::string::npos);
    CHECK(scrubbed.find("HTTP 500, v=1") != std::string::npos);  // non-secrets survive
}

TEST_CASE("SecretScrubber masks percent-decoded forms as well") {
    const SecretScrubber scrubber("https://example.com/?token=a%2Bb%2Fc%3Dd", {});
    CHECK(scrubber.scrub("token a+b/c=d") == "token ***");
}

TEST_CASE("is_remote recognises http and https in any case, nothing else") {
    CHECK(provision::is_remote("https://example.com/r.toml"));
    CHECK(provision::is_remote("HTTP://example.com/r.toml"));
    CHECK_FALSE(provision::is_remote("/etc/provision/r.toml"));
    CHECK_FALSE(provision::is_remote("ftp://example.com/r.toml"));
    CHECK_FALSE(provision::is_remote("https:/example.com"));
}
