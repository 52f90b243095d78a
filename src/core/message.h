// A message of a run's report: its text and how much it matters.  The
// summary prints each as "error: ...", "warning: ..." or "note: ...", the
// JSON report's "messages" carries the same word (docs/DESIGN.md).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provision {

// error: why the run failed (its exit status says so too); warning: the run
// goes on, but something the user asked for or relies on is not as it
// should be; note: what the user may want to know.  From most to least
// severe: the summary and the report list them in this order.
enum class Severity { error, warning, note };

inline std::string_view to_string(Severity severity) {
    switch (severity) {
        case Severity::error: return "error";
        case Severity::warning: return "warning";
        case Severity::note: return "note";
    }
    return "error";
}

struct Message {
    Severity severity = Severity::note;
    std::string text;

    static Message error(std::string text) { return {Severity::error, std::move(text)}; }
    static Message warning(std::string text) { return {Severity::warning, std::move(text)}; }
    static Message note(std::string text) { return {Severity::note, std::move(text)}; }
};

// Each of `texts`, as a message of `severity`, after those in `messages`.
inline void add_messages(std::vector<Message>& messages, Severity severity, const std::vector<std::string>& texts) {
    for (const std::string& text : texts) messages.push_back({severity, text});
}

}  // namespace provision
