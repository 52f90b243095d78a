// Small text helpers shared by every stage: names from recipes, the
// environment and URLs compare ignoring ASCII case and surrounding blanks.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/utf8.h"

namespace provision {

// ASCII lowercase copy.
inline std::string lowercase(std::string_view text) {
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower;
}

// `text` without leading and trailing characters of `blanks`.
inline std::string trimmed(std::string_view text, std::string_view blanks = " \t\r\n") {
    const auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    return std::string(text.substr(first, text.find_last_not_of(blanks) - first + 1));
}

// [A-Za-z_][A-Za-z0-9_]*: a name sh, bash and the env file accept.
inline bool is_valid_variable_name(std::string_view name) {
    if (name.empty()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0)) return false;
    }
    return true;
}

// Names in the order a person numbers them: a run of digits compares by its
// value, so "mlx5_2" comes before "mlx5_10" and "eth9" before "eth10".
inline bool natural_less(std::string_view a, std::string_view b) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i_end = i, j_end = j;
            while (i_end < a.size() && digit(a[i_end])) ++i_end;
            while (j_end < b.size() && digit(b[j_end])) ++j_end;
            std::string_view x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
            const auto unpadded = [](std::string_view run) {
                while (run.size() > 1 && run.front() == '0') run.remove_prefix(1);
                return run;
            };
            const std::string_view vx = unpadded(x), vy = unpadded(y);
            if (vx.size() != vy.size()) return vx.size() < vy.size();
            if (vx != vy) return vx < vy;
            if (x.size() != y.size()) return x.size() < y.size();  // "01" after "1": a total order
            i = i_end;
            j = j_end;
            continue;
        }
        if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

// How much of a user value an error message echoes (README, "Messages").
constexpr std::size_t kLongestEchoedValue = 64;
// How much of a path a message echoes (PATH_MAX): a path says where the
// input is, so it is escaped but not cut to kLongestEchoedValue.
constexpr std::size_t kLongestPath = 4096;
// The most of one error message that is printed: a message may list names
// the recipes define, and recipes are input too.
constexpr std::size_t kLongestMessage = 4096;

// `text` safe to print on one terminal line: control characters (ESC, CR,
// LF, NUL, DEL, C1 controls) as \xNN escapes, and beyond `max_bytes` cut
// at a character boundary with the full size noted, so a value from a GPU,
// a fixture or the environment can neither drive the terminal nor forge a
// second log line.  Every path, version or value that comes from the file
// system, a GPU, a fixture, a recipe or the environment is printed through
// this one function.
inline std::string printable(std::string_view text, std::size_t max_bytes = 256) {
    std::string out;
    std::size_t i = 0;
    for (; i < text.size() && out.size() < max_bytes; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(text[i + 1]) <= 0x9F;
        if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", c);
        } else if (c1) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
        } else {
            out += static_cast<char>(c);
        }
    }
    // Never end inside a UTF-8 sequence.
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) out += text[i++];
    if (i < text.size()) out += fmt::format("... ({} bytes in all)", text.size());
    return out;
}

// A value from outside provision (a flag, a variable, a file of the
// workload's, a GPU, a recipe) as a message shows it: formatted, it goes
// through printable(), escaped and cut to `max_bytes` with its size noted.
// A message takes such a value as an Echoed (echoed(), echoed_path()), so
// that the README's "Messages" rule holds by the argument's type; and
// whatever a message holds reaches the terminal through terminal.h, which
// escapes it once more.
struct Echoed {
    std::string_view text;
    std::size_t max_bytes = kLongestEchoedValue;
};

// A value: cut to kLongestEchoedValue.
inline Echoed echoed(std::string_view value) { return Echoed{value, kLongestEchoedValue}; }
// A path says where the input is: escaped, cut only at kLongestPath.
inline Echoed echoed_path(std::string_view path) { return Echoed{path, kLongestPath}; }

}  // namespace provision

template <>
struct fmt::formatter<provision::Echoed> : fmt::formatter<std::string_view> {
    template <typename Context>
    auto format(const provision::Echoed& value, Context& context) const {
        return fmt::formatter<std::string_view>::format(provision::printable(value.text, value.max_bytes), context);
    }
};
