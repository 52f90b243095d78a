#include "packages/installed_files.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace provision {
namespace {

// The first CSV field of `row`: quoted ("a,b.so") with "" for a quote, or
// plain.  A quoted field is unquoted into `buffer`.
std::string_view first_field(std::string_view row, std::string& buffer) {
    if (row.empty() || row.front() != '"') return row.substr(0, row.find(','));
    buffer.clear();
    for (std::size_t i = 1; i < row.size(); ++i) {
        if (row[i] != '"') {
            buffer += row[i];
        } else if (i + 1 < row.size() && row[i + 1] == '"') {
            buffer += '"';
            ++i;
        } else {
            break;
        }
    }
    return buffer;
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
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view row = text.substr(start, end - start);
        if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
        if (!row.empty()) visit(first_field(row, buffer));
        start = end + 1;
    }
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
