#include "packages/installed_files.h"

#include <algorithm>

#include "core/regular_file.h"

namespace provision {
namespace {

// RECORD of a large package (torch) is a few MiB; the packages read here
// list a few hundred files.
constexpr std::size_t kMaxRecordBytes = 16 * 1024 * 1024;

// The first CSV field of `row`: quoted ("a,b.so") with "" for a quote, or plain.
std::string first_field(std::string_view row) {
    if (row.empty() || row.front() != '"') return std::string(row.substr(0, row.find(',')));
    std::string field;
    for (std::size_t i = 1; i < row.size(); ++i) {
        if (row[i] != '"') {
            field += row[i];
        } else if (i + 1 < row.size() && row[i + 1] == '"') {
            field += '"';
            ++i;
        } else {
            break;
        }
    }
    return field;
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
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return true;
    return name.find(std::string(suffix) + ".") != std::string_view::npos;
}

}  // namespace

std::vector<std::string> parse_record(std::string_view text) {
    std::vector<std::string> paths;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view row = text.substr(start, end - start);
        if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
        if (!row.empty()) paths.push_back(first_field(row));
        start = end + 1;
    }
    return paths;
}

std::optional<std::vector<std::string>> installed_files_ending(const std::string& dist_info, std::string_view suffix,
                                                               std::string& error) {
    const auto text = read_regular_file(dist_info + "/RECORD", kMaxRecordBytes, error);
    if (!text) return std::nullopt;
    const std::string root = dist_info.substr(0, dist_info.rfind('/') + 1);
    std::vector<std::string> files;
    for (const auto& path : parse_record(*text))
        if (!climbs_out(path) && has_suffix(path, suffix)) files.push_back(root + path);
    return files;
}

}  // namespace provision
