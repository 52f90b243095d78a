// Small text helpers shared by every stage: names from recipes, the
// environment and URLs compare ignoring ASCII case and surrounding blanks.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

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

}  // namespace provision
