#include "net/redaction.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <optional>
#include <string_view>

#include "core/text.h"
#include "net/curl_library.h"

namespace provision {
namespace {

constexpr const char* kMask = "***";

// Secrets shorter than this are not scrubbed from free text: masking every
// "a" or "1" in a message would make it unreadable without hiding anything.
constexpr std::size_t kShortestScrubbedSecret = 4;

// Parameter names that carry credentials in the wild: ?token=, ?api_key=,
// ?access_token=, S3's X-Amz-Signature / X-Amz-Credential, Azure's sig=,
// ?password=, ?auth=, ?session_id= ...  Matched inside the name, so a
// harmless "monkey=" is masked too; masking too much costs nothing.
bool is_credential_name(std::string_view name) {
    static constexpr std::array<std::string_view, 9> kNeedles = {"token", "key",  "secret",     "sig",    "pass",
                                                                 "pwd",   "auth", "credential", "session"};
    const std::string lower = lowercase(name);
    return std::any_of(kNeedles.begin(), kNeedles.end(),
                       [&](std::string_view needle) { return lower.find(needle) != std::string::npos; });
}

// Calls visit(name, value) for each "name=value" of an &-separated list;
// a parameter without '=' has no value and is not visited.
template <typename Visit>
void for_each_parameter(std::string_view list, Visit visit) {
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find('&', start);
        if (end == std::string_view::npos) end = list.size();
        const std::string_view parameter = list.substr(start, end - start);
        const std::size_t equals = parameter.find('=');
        if (equals != std::string_view::npos) visit(parameter.substr(0, equals), parameter.substr(equals + 1));
        start = end + 1;
    }
}

std::string redact_parameters(std::string_view list) {
    std::string out;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find('&', start);
        if (end == std::string_view::npos) end = list.size();
        const std::string_view parameter = list.substr(start, end - start);
        const std::size_t equals = parameter.find('=');
        if (start > 0) out += '&';
        if (equals != std::string_view::npos && is_credential_name(parameter.substr(0, equals))) {
            out.append(parameter.substr(0, equals + 1));
            out += kMask;
        } else {
            out.append(parameter);
        }
        start = end + 1;
    }
    return out;
}

struct UrlHandleDeleter {
    void operator()(CURLU* handle) const { curl_library()->url_cleanup(handle); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlHandleDeleter>;

UrlHandle parse(const std::string& url) {
    const CurlLibrary* lib = curl_library();
    if (lib == nullptr) return nullptr;  // redact_url falls back to scheme and host
    UrlHandle handle(lib->url());
    if (!handle || lib->url_set(handle.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
        return nullptr;
    return handle;
}

std::optional<std::string> part(CURLU* handle, CURLUPart which, unsigned flags = 0) {
    char* text = nullptr;
    if (curl_library()->url_get(handle, which, &text, flags) != CURLUE_OK || text == nullptr) return std::nullopt;
    std::string copy(text);
    curl_library()->free(text);
    return copy;
}

std::string percent_decoded(std::string_view text) {
    int length = 0;
    const CurlLibrary* lib = curl_library();
    if (lib == nullptr) return std::string(text);
    char* decoded = lib->easy_unescape(nullptr, text.data(), static_cast<int>(text.size()), &length);
    if (decoded == nullptr) return std::string(text);
    std::string copy(decoded, static_cast<std::size_t>(length));
    lib->free(decoded);
    return copy;
}

// For a URL libcurl rejects: the scheme and host, never the rest.
std::string redact_unparsed(const std::string& url) {
    const std::size_t scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return "(unparseable URL)";
    const std::size_t host_start = scheme_end + 3;
    const std::size_t host_end = url.find_first_of("/?#", host_start);
    std::string authority = url.substr(host_start, host_end == std::string::npos ? std::string::npos
                                                                                  : host_end - host_start);
    if (const std::size_t at = authority.rfind('@'); at != std::string::npos)
        authority = std::string(kMask) + authority.substr(at);
    return url.substr(0, host_start) + authority + (host_end == std::string::npos ? "" : "/...");
}

}  // namespace

std::string redact_url(const std::string& url) {
    const UrlHandle handle = parse(url);
    if (!handle) return redact_unparsed(url);
    CURLU* h = handle.get();
    const CurlLibrary& lib = *curl_library();  // parse() succeeded: it is loaded
    bool ok = true;
    if (part(h, CURLUPART_USER) || part(h, CURLUPART_PASSWORD) || part(h, CURLUPART_OPTIONS)) {
        ok = ok && lib.url_set(h, CURLUPART_USER, kMask, 0) == CURLUE_OK;
        ok = ok && lib.url_set(h, CURLUPART_PASSWORD, nullptr, 0) == CURLUE_OK;
        ok = ok && lib.url_set(h, CURLUPART_OPTIONS, nullptr, 0) == CURLUE_OK;
    }
    if (const auto query = part(h, CURLUPART_QUERY))
        ok = ok && lib.url_set(h, CURLUPART_QUERY, redact_parameters(*query).c_str(), 0) == CURLUE_OK;
    if (const auto fragment = part(h, CURLUPART_FRAGMENT))
        ok = ok && lib.url_set(h, CURLUPART_FRAGMENT, redact_parameters(*fragment).c_str(), 0) == CURLUE_OK;
    const auto redacted = ok ? part(h, CURLUPART_URL) : std::nullopt;
    return redacted ? *redacted : redact_unparsed(url);
}

SecretScrubber::SecretScrubber(const std::string& url, const std::vector<std::string>& headers) {
    if (const UrlHandle handle = parse(url)) {
        for (const CURLUPart which : {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS}) {
            if (const auto raw = part(handle.get(), which)) {
                add(*raw);
                add(percent_decoded(*raw));
            }
        }
        for (const CURLUPart which : {CURLUPART_QUERY, CURLUPART_FRAGMENT}) {
            if (const auto list = part(handle.get(), which)) {
                for_each_parameter(*list, [&](std::string_view name, std::string_view value) {
                    if (!is_credential_name(name)) return;
                    add(std::string(value));
                    add(percent_decoded(value));
                });
            }
        }
    }
    for (const std::string& header : headers) {
        const std::size_t colon = header.find(':');
        if (colon == std::string::npos) {
            add(header);  // malformed: all of it may be secret
            continue;
        }
        const std::string value = header.substr(colon + 1);
        add(value);
        // Each word too: "Bearer abc" leaks "abc" even where the whole value does not appear.
        std::size_t start = 0;
        while (start < value.size()) {
            const std::size_t word_start = value.find_first_not_of(" \t", start);
            if (word_start == std::string::npos) break;
            std::size_t word_end = value.find_first_of(" \t", word_start);
            if (word_end == std::string::npos) word_end = value.size();
            add(value.substr(word_start, word_end - word_start));
            start = word_end;
        }
    }
    // Longest first, so a secret that contains another is masked whole.
    std::sort(secrets_.begin(), secrets_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

void SecretScrubber::add(const std::string& secret) {
    const std::size_t first = secret.find_first_not_of(" \t");
    if (first == std::string::npos) return;
    const std::string trimmed = secret.substr(first, secret.find_last_not_of(" \t") - first + 1);
    if (trimmed.size() < kShortestScrubbedSecret) return;
    if (std::find(secrets_.begin(), secrets_.end(), trimmed) == secrets_.end()) secrets_.push_back(trimmed);
}

std::string SecretScrubber::scrub(std::string text) const {
    for (const std::string& secret : secrets_) {
        for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
            text.replace(at, secret.size(), kMask);
    }
    return text;
}

}  // namespace provision
