// Keeps credentials out of every message that names a URL or a request.
// A report URL may carry a token in its userinfo or query, and a report
// header may carry one in its value; none of them is ever printed.
#pragma once

#include <string>
#include <vector>

namespace provision {

// The URL with its userinfo replaced by "***" and the value of every
// credential-like query or fragment parameter (token, key, secret, sig,
// password, auth, credential, session ... matched case-insensitively inside
// the name) replaced by "***".  A URL libcurl cannot parse keeps only its
// scheme and host part, so nothing unparsed slips through.
std::string redact_url(const std::string& url);

// The secret strings a URL and a set of "Name: value" headers carry, for
// scrubbing free text (libcurl's own error messages) with `scrub`.
class SecretScrubber {
public:
    SecretScrubber(const std::string& url, const std::vector<std::string>& headers);

    // `text` with every known secret replaced by "***".
    std::string scrub(std::string text) const;

private:
    void add(const std::string& secret);
    std::vector<std::string> secrets_;
};

}  // namespace provision
