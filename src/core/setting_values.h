// The one parser for each kind of setting value that comes from a flag or an
// environment variable: booleans and durations.  Errors are
// Error(usage) naming the source exactly as the user wrote it ("--fetch-timeout"
// or "PROVISION_FETCH_TIMEOUT"), so the message points at what to fix.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace provision {

// 1/true/yes/on and 0/false/no/off, in any case, blanks around ignored.
bool parse_boolean(std::string_view text, std::string_view source);

// Seconds as a decimal number ("5", "0.25", "1e1"): finite, more than 0, at
// most `max_seconds`, and at least one millisecond (no value silently
// rounds to 0 ms).  Returns whole milliseconds.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view source, double max_seconds);

}  // namespace provision
