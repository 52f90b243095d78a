#include "packages/package_name.h"

namespace provision {
namespace {

bool is_separator(char c) { return c == '-' || c == '_' || c == '.'; }

bool is_ascii_alnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string normalize_package_name(std::string_view name) {
    std::string normalized;
    normalized.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (is_separator(name[i])) {
            while (i + 1 < name.size() && is_separator(name[i + 1])) ++i;
            normalized += '-';
        } else {
            normalized += ascii_lower(name[i]);
        }
    }
    return normalized;
}

bool is_valid_package_name(std::string_view name) {
    if (name.empty() || !is_ascii_alnum(name.front()) || !is_ascii_alnum(name.back())) return false;
    for (char c : name)
        if (!is_ascii_alnum(c) && !is_separator(c)) return false;
    return true;
}

}  // namespace provision
