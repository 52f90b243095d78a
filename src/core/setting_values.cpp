#include "core/setting_values.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"

namespace provision {

bool parse_boolean(std::string_view text, std::string_view source) {
    const std::string value = lowercase(trimmed(text));
    if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
    if (value == "0" || value == "false" || value == "no" || value == "off") return false;
    throw Error(ExitCode::usage, fmt::format("{}={}: expected 1, true, yes, on or 0, false, no, off", source,
                                             echoed(text)));
}

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view source, double max_seconds) {
    constexpr double kMinSeconds = 0.001;
    const std::string value = trimmed(text);
    const auto refuse = [&](std::string_view why) -> std::chrono::milliseconds {
        throw Error(ExitCode::usage,
                    fmt::format("{}={}: {}; expected seconds, a number from {:g} to {:g}", source,
                                echoed(text), why, kMinSeconds, max_seconds));
    };
    double seconds = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (value.empty() || error == std::errc::invalid_argument || end != value.data() + value.size())
        return refuse("not a number");
    if (error == std::errc::result_out_of_range || !std::isfinite(seconds) || seconds > max_seconds)
        return refuse("out of range");
    if (!(seconds > 0)) return refuse("not more than 0");
    // The range the message states, not what happens to round to 1 ms.
    if (seconds < kMinSeconds) return refuse("shorter than a millisecond");
    return std::chrono::milliseconds(std::llround(seconds * 1000));
}

}  // namespace provision
