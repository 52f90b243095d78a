// Posting the JSON report to a collector (`--report-url`).  The report is a
// courtesy to whoever watches a fleet; it must never hold up or fail the
// container's start, so every failure becomes a warning and the whole post,
// retries included, fits in a small time budget.
#pragma once

#include <string>
#include <vector>

namespace provision {

struct ReportPost {
    std::string url;
    std::vector<std::string> headers;  // "Name: value", e.g. from PROVISION_REPORT_HEADER; values never printed
    long budget_ms = 2000;             // everything: connects, transfers, backoff
    int attempts = 3;
    bool allow_http = false;           // plain http:// only when the user said so
};

// POSTs json (Content-Type: application/json).  A connect failure, an empty
// reply, a 429 or a 5xx is retried after a short backoff while attempts and
// budget last; a 2xx is success; anything else ends it.  Each connect may
// take at most 500 ms.  Returns the warnings to print (none on success),
// with the URL redacted and no credential in them.  Never throws.
std::vector<std::string> post_report(const ReportPost& post, const std::string& json);

// The headers of PROVISION_REPORT_HEADER: one "Name: value" per line (LF or
// CRLF line ends), blank lines skipped, each line otherwise kept as it is
// (post_report refuses a malformed one with a warning that does not quote it).
std::vector<std::string> report_headers_from(const std::string& text);

}  // namespace provision
