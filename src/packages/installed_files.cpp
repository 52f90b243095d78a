#include "packages/installed_files.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace provision {
namespace {

// The first CSV field of `row`: quoted ("a,b.so") with "" for a quote, or
// plain.  A quoted field is unquoted into `buffer`.  `rest`, when given, is
// set to what follows the field's comma (empty without one).
std::string_view first_field(std::string_view row, std::string& buffer, std::string_view* rest = nullptr) {
    const auto set_rest = [&](std::size_t comma) {
        if (rest) *rest = comma < row.size() ? row.substr(comma + 1) : std::string_view();
    };
    if (row.empty() || row.front() != '"') {
        const std::size_t comma = std::min(row.find(','), row.size());
        set_rest(comma);
        return row.substr(0, comma);
    }
    buffer.clear();
    std::size_t i = 1;
    for (; i < row.size(); ++i) {
        if (row[i] != '"') {
            buffer += row[i];
        } else if (i + 1 < row.size() && row[i + 1] == '"') {
            buffer += '"';
            ++i;
        } else {
            break;
        }
    }
    set_rest(std::min(row.find(',', i), row.size()));
    return buffer;
}

// Calls `visit` with each non-empty row of RECORD, CR and LF taken off.
template <typename Visit>
void for_each_row(std::string_view text, Visit&& visit) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view row = text.substr(start, end - start);
        if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
        if (!row.empty()) visit(row);
        start = end + 1;
    }
}

bool climbs_out(std::string_view path) {
    if (path.empty() || path.front() == '/') return true;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        if (path.substr(start, end - start) == "..") return true;
        start = end + 1;
    }
    return false;
}

bool has_suffix(std::string_view path, std::string_view suffix) {
    const std::string_view name = path.substr(path.rfind('/') + 1);
    if (name.ends_with(suffix)) return true;
    for (std::size_t at = name.find(suffix); at != std::string_view::npos; at = name.find(suffix, at + 1))
        if (at + suffix.size() < name.size() && name[at + suffix.size()] == '.') return true;
    return false;
}

}  // namespace

void for_each_record_path(std::string_view text, const std::function<void(std::string_view path)>& visit) {
    std::string buffer;
    for_each_row(text, [&](std::string_view row) { visit(first_field(row, buffer)); });
}

std::optional<std::optional<std::uint64_t>> recorded_size(std::string_view text, std::string_view path) {
    std::string buffer;
    std::optional<std::optional<std::uint64_t>> found;
    for_each_row(text, [&](std::string_view row) {
        if (found) return;
        std::string_view rest;
        if (first_field(row, buffer, &rest) != path) return;
        // hash,size: the size is what follows the last comma, digits alone.
        const std::size_t comma = rest.rfind(',');
        const std::string_view size = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), value);
        const bool whole_number = !size.empty() && error == std::errc() && end == size.data() + size.size();
        found = whole_number ? std::optional<std::uint64_t>(value) : std::nullopt;
    });
    return found;
}

std::vector<std::string> parse_record(std::string_view text) {
    std::vector<std::string> paths;
    for_each_record_path(text, [&](std::string_view path) { paths.emplace_back(path); });
    return paths;
}

std::optional<std::vector<std::string>> installed_files_ending(const std::string& dist_info, std::string_view suffix,
                                                               std::string& error) {
    std::string why;
    const auto text = read_regular_file(dist_info + "/RECORD", kMaxRecordBytes, why);
    if (!text) {
        error = "cannot be read: " + why;
        return std::nullopt;
    }
    const std::string root = dist_info.substr(0, dist_info.rfind('/') + 1);
    std::vector<std::string> files;
    std::unordered_set<std::string> seen;
    bool too_many = false;
    for_each_record_path(*text, [&](std::string_view path) {
        if (too_many || climbs_out(path) || !has_suffix(path, suffix)) return;
        if (seen.contains(std::string(path))) return;
        if (seen.size() == kMaxRecordFiles) {
            too_many = true;
            return;
        }
        seen.emplace(path);
        files.push_back(root + std::string(path));
    });
    if (too_many) {
        error = fmt::format("lists more than {} files ending in {}", kMaxRecordFiles, suffix);
        return std::nullopt;
    }
    return files;
}

}  // namespace provision
