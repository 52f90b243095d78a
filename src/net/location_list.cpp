#include "net/location_list.h"

#include <cctype>
#include <string_view>

#include "core/text.h"

namespace provision {
namespace {

bool is_web_scheme(std::string_view word) {
    const std::string lower = lowercase(word);
    return lower == "http" || lower == "https";
}

// Whether the ':' at `at`, inside a URL's authority, belongs to the URL.
bool colon_in_authority(const std::string& text, std::size_t at, int bracket_depth) {
    if (bracket_depth > 0) return true;
    if (at + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[at + 1]))) return true;  // port
    const std::size_t authority_end = text.find_first_of("/?#", at);
    const std::size_t at_sign = text.find('@', at);
    return at_sign != std::string::npos && at_sign < authority_end;  // user:password@
}

}  // namespace

std::vector<std::string> split_location_list(const std::string& text) {
    std::vector<std::string> items;
    std::string current;
    bool in_authority = false;
    int bracket_depth = 0;
    auto finish_item = [&] {
        if (!current.empty()) items.push_back(current);
        current.clear();
        in_authority = false;
        bracket_depth = 0;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ':' && !in_authority && text.compare(i, 3, "://") == 0 && is_web_scheme(current)) {
            current += "://";
            i += 2;
            in_authority = true;
            continue;
        }
        if (in_authority) {
            if (c == '/' || c == '?' || c == '#') in_authority = false;
            else if (c == '[') ++bracket_depth;
            else if (c == ']' && bracket_depth > 0) --bracket_depth;
        }
        if (c == ':' && !(in_authority && colon_in_authority(text, i, bracket_depth))) {
            finish_item();
            continue;
        }
        current += c;
    }
    finish_item();
    return items;
}

}  // namespace provision
