// The one way provision's own text reaches the terminal (stderr): a message
// is one line whatever it holds, and a multi-line text (the summary) keeps
// its own line breaks alone.  Control characters are escaped here whether or
// not the values in the text were echoed (core/text.h, Echoed), so no value
// from a file, the environment or a GPU can drive the terminal or forge a
// line of provision's.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/text.h"

namespace provision {

// The most of one line the terminal gets: above what a message cuts its own
// parts to (kLongestMessage, with the size noted), so that text cut already
// is never cut twice; a bound for what nothing cut before.
constexpr std::size_t kLongestTerminalLine = 2 * kLongestMessage;

// "provision: KIND: MESSAGE\n" (KIND "error", "warning"; empty: none), the
// message escaped (a newline too) and cut to kLongestTerminalLine.
inline std::string message_line(std::string_view kind, std::string_view message) {
    std::string line = "provision: ";
    if (!kind.empty()) line += std::string(kind) + ": ";
    return line + printable(message, kLongestTerminalLine) + "\n";
}

// `text` cut at its newlines, each line escaped and cut to kLongestTerminalLine.
inline std::string terminal_lines(std::string_view text) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        out += printable(text.substr(start, end - start), kLongestTerminalLine);
        out += '\n';
        start = end + 1;
    }
    return out;
}

inline void print_message(std::string_view kind, std::string_view message) {
    std::fputs(message_line(kind, message).c_str(), stderr);
    std::fflush(stderr);
}

}  // namespace provision
