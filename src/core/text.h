// Small text helpers shared by every stage: names from recipes, the
// environment and URLs compare ignoring ASCII case and surrounding blanks.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include <fmt/format.h>

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

// `text` as valid UTF-8: every byte that does not belong to a well-formed
// sequence (stray continuation bytes, overlong forms, surrogates, values
// past U+10FFFF, a truncated sequence) becomes U+FFFD.
inline std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = length > 0 && i + length <= text.size();
        char32_t code = length == 1 ? c : length == 2 ? (c & 0x1F) : length == 3 ? (c & 0x0F) : (c & 0x07);
        for (std::size_t k = 1; ok && k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            ok = (next & 0xC0) == 0x80;
            code = (code << 6) | (next & 0x3F);
        }
        if (ok) {
            const char32_t minimum = length == 2 ? 0x80 : length == 3 ? 0x800 : length == 4 ? 0x10000 : 0;
            ok = code >= minimum && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
        }
        if (ok) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        }
    }
    return out;
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

// `text` safe to print on one terminal line: control characters (ESC, CR,
// LF, NUL, DEL, C1 controls) as \xNN escapes, and beyond `max_bytes` cut
// at a character boundary with the full size noted, so a value from a GPU,
// a fixture or the environment can neither drive the terminal nor forge a
// second log line.
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

}  // namespace provision
