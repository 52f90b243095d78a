#include "packages/metadata.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace provision {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && (is_blank(s.front()) || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (is_blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

std::optional<std::string>* field_for(MetadataHeaders& headers, std::string_view key) {
    if (equals_ignoring_case(key, "Name")) return &headers.name;
    if (equals_ignoring_case(key, "Version")) return &headers.version;
    if (equals_ignoring_case(key, "Metadata-Version")) return &headers.metadata_version;
    return nullptr;
}

// Where the header block ends: just past the first blank line at or after
// `search_from` (0 also finds a blank first line), or npos.
std::size_t header_block_end(std::string_view text, std::size_t search_from) {
    if (search_from == 0) {
        if (text.starts_with("\n")) return 1;
        if (text.starts_with("\r\n")) return 2;
    }
    for (std::size_t i = text.find('\n', search_from); i != std::string_view::npos; i = text.find('\n', i + 1)) {
        std::size_t next = i + 1;
        if (next < text.size() && text[next] == '\r') ++next;
        if (next < text.size() && text[next] == '\n') return next + 1;
    }
    return std::string_view::npos;
}

}  // namespace

MetadataHeaders parse_metadata_headers(std::string_view text) {
    MetadataHeaders headers;
    std::optional<std::string>* current = nullptr;  // the field a continuation line extends
    bool current_is_new = false;                    // set by this occurrence, not an earlier one
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) break;  // the body starts here
        if (is_blank(line.front())) {
            if (current && current_is_new) {
                const std::string_view more = trim(line);
                if (!more.empty()) {
                    std::string& field = **current;
                    if (!field.empty()) field += ' ';
                    field += more;
                }
            }
            continue;
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            current = nullptr;
            continue;
        }
        current = field_for(headers, trim(line.substr(0, colon)));
        current_is_new = current && !current->has_value();
        if (current_is_new) *current = std::string(trim(line.substr(colon + 1)));
    }
    return headers;
}

std::string_view metadata_header_block(std::string_view text) {
    const std::size_t end = header_block_end(text, 0);
    return end == std::string_view::npos ? text : text.substr(0, end);
}

std::optional<std::string> read_metadata_header_block(const std::string& path, std::string& error) {
    constexpr std::size_t chunk = 16 * 1024;  // holds the headers of nearly every METADATA
    constexpr std::size_t limit = 1024 * 1024;
    // A FIFO named METADATA must not block the scan, and a device node must
    // not be read at all: RegularFile::open refuses both unread.
    OpenError failure;
    const auto file = RegularFile::open(path, failure);
    if (!file) {
        error = failure.failure == OpenFailure::not_regular_file ? "it " + failure.why : failure.why;
        return std::nullopt;
    }
    std::string block;
    while (block.size() < limit) {
        const std::size_t old_size = block.size();
        block.resize(old_size + chunk);
        const auto got = file->read_some(old_size, block.data() + old_size, chunk);
        if (!got) {
            error = std::strerror(errno);
            return std::nullopt;
        }
        block.resize(old_size + *got);
        if (*got == 0) break;
        // A blank line may straddle two chunks: look again from just before.
        const std::size_t end = header_block_end(block, old_size > 2 ? old_size - 2 : 0);
        if (end != std::string::npos) {
            block.resize(end);
            break;
        }
    }
    return block;
}

}  // namespace provision
