#include "nccl/nccl_version.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace provision {
namespace {

// Longer is no version NCCL or CUDA writes (and no value worth echoing whole).
constexpr std::size_t kLongestVersion = 64;
// Nine digits always fit an int.
constexpr std::size_t kLongestPart = 9;

bool tail_character(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '_';
}

}  // namespace

std::optional<ReleaseNumber> parse_release(std::string_view text) {
    if (text.empty() || text.size() > kLongestVersion) return std::nullopt;
    ReleaseNumber release;
    std::size_t at = 0;
    while (release.written < 3) {
        std::size_t end = at;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        if (end == at || end - at > kLongestPart) return std::nullopt;
        std::from_chars(text.data() + at, text.data() + end, release.parts[release.written]);
        ++release.written;
        at = end;
        // Another part only where a digit follows the dot: "2.28.9.post1" ends at ".post1".
        if (at + 1 < text.size() && text[at] == '.' && std::isdigit(static_cast<unsigned char>(text[at + 1]))) {
            ++at;
            continue;
        }
        break;
    }
    const std::string_view tail = text.substr(at);
    if (!tail.empty()) {
        // A tail starts with a letter, a separator and a letter, or '+'; never a fourth number.
        const bool starts_well = std::isalpha(static_cast<unsigned char>(tail.front())) || tail.front() == '+' ||
                                 ((tail.front() == '.' || tail.front() == '-' || tail.front() == '_') &&
                                  tail.size() > 1 && std::isalpha(static_cast<unsigned char>(tail[1])));
        if (!starts_well || !std::all_of(tail.begin(), tail.end(), tail_character)) return std::nullopt;
    }
    return release;
}

std::optional<ReleaseNumber> parse_nccl_version(std::string_view text) {
    auto release = parse_release(text);
    if (!release || release->written < 2) return std::nullopt;
    return release;
}

bool at_least(const ReleaseNumber& version, int major, int minor, int patch) {
    return version.parts >= std::array<int, 3>{major, minor, patch};
}

}  // namespace provision
