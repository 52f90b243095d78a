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

// Seconds as a decimal number ("5", "0.25", "1e1"): finite, from 0.001 (a
// millisecond; nothing below it, not even a value that would round to one)
// to `max_seconds`.  Returns whole milliseconds, rounded to the nearest.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view source, double max_seconds);

}  // namespace provision
