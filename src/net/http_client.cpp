#include "net/http_client.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "net/curl_library.h"

namespace provision {
namespace {

struct EasyDeleter {
    void operator()(CURL* handle) const { curl_library()->easy_cleanup(handle); }
};
struct ListDeleter {
    void operator()(curl_slist* list) const { curl_library()->slist_free_all(list); }
};

struct BodySink {
    CURL* curl = nullptr;
    std::string* body = nullptr;
    std::size_t max_bytes = 0;
    bool too_large = false;
};

// Keeps 2xx bodies up to the limit; returning short makes libcurl stop the
// transfer with CURLE_WRITE_ERROR, which is how an oversized body ends early
// even when the server sent no Content-Length.
std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& sink = *static_cast<BodySink*>(user);
    const std::size_t bytes = size * count;
    if (sink.body == nullptr) return bytes;
    long status = 0;
    curl_library()->easy_getinfo(sink.curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) return bytes;
    if (sink.body->size() + bytes > sink.max_bytes) {
        sink.too_large = true;
        return 0;
    }
    sink.body->append(data, bytes);
    return bytes;
}

Transport classify(CURLcode code, bool too_large, long status, bool connected) {
    switch (code) {
    case CURLE_OK:
        return Transport::ok;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
        return Transport::connect_failed;
    case CURLE_OPERATION_TIMEDOUT:
        return Transport::timed_out;
    case CURLE_FILESIZE_EXCEEDED:
        // libcurl checks Content-Length before looking at the status; an
        // oversized error page is still an error response, not a big recipe.
        return status >= 300 ? Transport::ok : Transport::too_large;
    case CURLE_WRITE_ERROR:
        return too_large ? Transport::too_large : Transport::failed;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
        return Transport::tls_failed;
    case CURLE_GOT_NOTHING:
        return Transport::empty_reply;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
        return Transport::broken_response;
    case CURLE_UNSUPPORTED_PROTOCOL:
        // Also what libcurl says when a connected peer answers without a
        // status line ("HTTP/0.9"); before connecting it is a refused scheme.
        return connected && status == 0 ? Transport::broken_response : Transport::failed;
    default:
        return Transport::failed;
    }
}

}  // namespace

const char* allowed_protocols(bool allow_http) { return allow_http ? "http,https" : "https"; }

bool is_plain_http(const std::string& url) {
    static constexpr std::string_view kScheme = "http://";
    if (url.size() < kScheme.size()) return false;
    for (std::size_t i = 0; i < kScheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(url[i])) != kScheme[i]) return false;
    return true;
}

HttpResponse perform(const HttpRequest& request) {
    HttpResponse response;
    const auto start = std::chrono::steady_clock::now();
    const auto finish = [&]() -> HttpResponse& {
        response.elapsed_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return response;
    };

    const CurlLibrary* lib = curl_library();
    if (lib == nullptr) {
        response.error = curl_library_why_not();
        return finish();
    }
    const std::unique_ptr<CURL, EasyDeleter> easy(lib->easy_init());
    if (!easy) {
        response.error = "libcurl could not create a transfer handle";
        return finish();
    }
    CURL* curl = easy.get();
    char error_text[CURL_ERROR_SIZE] = {};
    BodySink sink{curl, request.keep_body ? &response.body : nullptr, request.max_body_bytes, false};

    std::unique_ptr<curl_slist, ListDeleter> headers;
    auto add_header = [&](const std::string& header) {
        if (curl_slist* grown = lib->slist_append(headers.get(), header.c_str())) {
            headers.release();
            headers.reset(grown);
        }
    };
    for (const std::string& header : request.headers) add_header(header);

    lib->easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    lib->easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
    lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in a threaded process
    lib->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, allowed_protocols(request.allow_http));
    lib->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
    lib->easy_setopt(curl, CURLOPT_TIMEOUT_MS, request.total_timeout_ms);
    if (request.keep_body)
        lib->easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_body_bytes));
    lib->easy_setopt(curl, CURLOPT_FAILONERROR, 0L);  // the status is read and judged by the caller
    lib->easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
    lib->easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    lib->easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl decodes; the limit counts decoded bytes
    lib->easy_setopt(curl, CURLOPT_USERAGENT, "provision/" PROVISION_VERSION);
    if (request.follow_redirects) {
        lib->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
        lib->easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
        // An https-only fetch must not be redirected to plain http.
        lib->easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, allowed_protocols(request.allow_http));
    }
    if (request.post_body) {
        lib->easy_setopt(curl, CURLOPT_POST, 1L);
        lib->easy_setopt(curl, CURLOPT_POSTFIELDS, request.post_body->data());
        lib->easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.post_body->size()));
        // Without this libcurl waits up to a second for "100 Continue" before
        // sending a body over 1 KiB, which a short budget cannot afford.
        add_header("Expect:");
    }
    if (headers) lib->easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = lib->easy_perform(curl);

    lib->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_off_t connect_us = 0;
    lib->easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    response.connected = connect_us > 0 || response.status > 0;
    response.transport = classify(code, sink.too_large, response.status, response.connected);
    if (response.transport == Transport::ok) {
        if (response.status < 200 || response.status >= 300) response.body.clear();
        curl_header* etag = nullptr;
        if (lib->easy_header(curl, "ETag", 0, CURLH_HEADER, -1, &etag) == CURLHE_OK && etag && etag->value)
            response.etag = etag->value;
    } else {
        response.body.clear();
        response.error = response.transport == Transport::too_large
                             ? fmt::format("the body is larger than the limit of {} bytes", request.max_body_bytes)
                         : error_text[0] != '\0'
                             ? fmt::format("{}: {}", lib->easy_strerror(code), error_text)
                             : std::string(lib->easy_strerror(code));
    }
    return finish();
}

std::string describe_failure(const HttpResponse& response, const HttpRequest& request) {
    switch (response.transport) {
    case Transport::ok:
        return fmt::format("the server answered HTTP {}", response.status);
    case Transport::connect_failed:
        return fmt::format("cannot connect ({})", response.error);
    case Transport::timed_out:
        return response.connected
                   ? fmt::format("no complete answer within the total timeout of {} ms", request.total_timeout_ms)
                   : fmt::format("no connection within {} ms",
                                 std::min(request.connect_timeout_ms, request.total_timeout_ms));
    case Transport::tls_failed:
        return fmt::format("the TLS handshake failed ({})", response.error);
    case Transport::empty_reply:
        return "the server closed the connection without answering";
    case Transport::broken_response:
        return fmt::format("the connection broke or the server does not speak HTTP ({})", response.error);
    case Transport::too_large:
    case Transport::failed:
        break;
    }
    return response.error;
}

}  // namespace provision
