// Keeps every input away from the one path where Debian 12's toml++ (3.3)
// reaches undefined behaviour, without refusing any valid TOML.
//
// toml++ 3.3 asks is_non_ascii_horizontal_whitespace() about code points it
// decoded from the input (in values, keys, comments, strings while recording,
// after a line-ending backslash).  For the code points of three blocks that
// function reaches __builtin_unreachable (fixed upstream only in July 2026,
// marzer/tomlplusplus#295 and #305).  The guarantee:
//   1. the text handed to toml++ is valid UTF-8, so toml++ decodes exactly the
//      code points guard_toml_text() decoded;
//   2. none of them is in those blocks: each is replaced by a stand-in from the
//      private-use plane 16, one code point for one, so lines and columns stay;
//   3. TOML 1.0 treats the stand-ins as it treats the originals (neither is
//      whitespace, a newline, a bare-key character or a control character),
//      so the document parses, or fails at the same place, as it would with a
//      fixed toml++;
//   4. restore_toml_text() maps the stand-ins back in every parsed string and
//      key.  Nothing else can produce a stand-in: a raw plane-16 code point of
//      that range, or a "\U0010" escape that could spell one, is refused.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace provision {

// Whether toml++ 3.3's whitespace test reaches __builtin_unreachable for `c`.
bool toml_whitespace_test_breaks_on(char32_t c);

struct GuardedText {
    std::string text;              // what toml++ may read
    std::size_t substitutions = 0;  // stand-ins put in
};

// Where and why a text cannot be handed to toml++ at all.
struct UnreadableText {
    std::size_t line = 0, column = 0;  // 1-based, columns in characters
    std::string reason;
};

// The text with every breaking code point replaced by its stand-in, or where
// it cannot be read: invalid UTF-8 (which TOML forbids anyway), a raw
// stand-in code point, or a "\U0010" escape.
std::variant<GuardedText, UnreadableText> guard_toml_text(std::string_view text);

// Maps stand-ins in `text` back to the code points they replaced.
std::string restore_toml_text(std::string_view text);

}  // namespace provision
