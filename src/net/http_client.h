// One HTTP(S) transfer through libcurl with the limits provision needs:
// connect and total timeouts, a body size limit, an allowed scheme set.
// Nothing here retries, caches or prints; callers decide what an outcome
// means.  Messages in the response are libcurl's words, not yet scrubbed of
// secrets (see net/redaction.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace provision {

struct HttpRequest {
    std::string url;
    std::vector<std::string> headers;      // "Name: value", sent as given
    std::optional<std::string> post_body;  // POST it when set, else GET
    long connect_timeout_ms = 2000;
    long total_timeout_ms = 10000;         // the whole transfer, connect included
    std::size_t max_body_bytes = 1 << 20;  // a longer 2xx body stops the transfer (Transport::too_large)
    bool keep_body = true;                 // false: the answer's body is read and thrown away, any size
    bool allow_http = false;               // else https only, redirects included
    bool follow_redirects = true;
};

enum class Transport {
    ok,               // a response arrived; look at the status
    connect_failed,   // no connection: refused, unresolvable, unreachable
    timed_out,        // a timeout struck (HttpResponse::connected says in which phase)
    tls_failed,       // TLS handshake or certificate failure
    too_large,        // the body passed max_body_bytes
    empty_reply,      // the peer closed the connection without answering
    broken_response,  // connection dropped midway, or the peer does not speak HTTP
    failed,           // anything else (bad URL, refused scheme, ...)
};

struct HttpResponse {
    Transport transport = Transport::failed;
    bool connected = false;  // a TCP connection was established
    long status = 0;         // HTTP status of the last response, 0 when none arrived
    std::string body;        // the body of a 2xx response; other bodies are discarded
    std::string etag;        // the ETag header of the last response, "" when none
    std::string error;       // why the transfer failed, in libcurl's words
    double elapsed_ms = 0;
};

HttpResponse perform(const HttpRequest& request);

// Why `response` is not a usable answer, in a user's words ("the server
// answered HTTP 500", "no connection within 2000 ms", ...).
std::string describe_failure(const HttpResponse& response, const HttpRequest& request);

// How a user permits plain http, named in every refusal so the fix is one
// copy away.  The command line defines the switch with these names.
inline constexpr const char* kAllowHttpFlag = "--allow-http";
inline constexpr const char* kAllowHttpVariable = "PROVISION_ALLOW_HTTP=1";

// True for an http:// URL (any letter case): the scheme that needs allow_http.
bool is_plain_http(const std::string& url);

// "https" or "http,https": the CURLOPT_PROTOCOLS_STR value for a request.
const char* allowed_protocols(bool allow_http);

}  // namespace provision
