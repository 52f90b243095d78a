// UTF-8, strictly: the one decoder and encoder the parsers and the report
// share (no overlong forms, no surrogates, nothing past U+10FFFF).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace provision {

struct DecodedCodePoint {
    char32_t code_point;
    std::size_t length;  // bytes
};

// The code point that starts at byte `at`, or nothing where the bytes there
// are not well-formed UTF-8 (a stray or missing continuation byte, an
// overlong form, a surrogate, a value past U+10FFFF, a cut sequence).
inline std::optional<DecodedCodePoint> decode_utf8_at(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const unsigned char first = byte(0);
    if (first < 0x80) return DecodedCodePoint{first, 1};
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
    char32_t value = 0;
    if (first >= 0xC2 && first <= 0xDF) {
        length = 2, value = first & 0x1F;
    } else if (first >= 0xE0 && first <= 0xEF) {
        length = 3, value = first & 0x0F;
        if (first == 0xE0) low = 0xA0;
        if (first == 0xED) high = 0x9F;
    } else if (first >= 0xF0 && first <= 0xF4) {
        length = 4, value = first & 0x07;
        if (first == 0xF0) low = 0x90;
        if (first == 0xF4) high = 0x8F;
    } else {
        return std::nullopt;
    }
    if (at + length > text.size()) return std::nullopt;
    for (std::size_t i = 1; i < length; ++i) {
        const unsigned char next = byte(i);
        if (next < (i == 1 ? low : 0x80) || next > (i == 1 ? high : 0xBF)) return std::nullopt;
        value = (value << 6) | (next & 0x3F);
    }
    return DecodedCodePoint{value, length};
}

inline void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

// `text` as valid UTF-8: every byte that does not start a well-formed
// sequence becomes U+FFFD.
inline std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        if (const auto decoded = decode_utf8_at(text, at)) {
            out.append(text.substr(at, decoded->length));
            at += decoded->length;
        } else {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++at;
        }
    }
    return out;
}

}  // namespace provision
