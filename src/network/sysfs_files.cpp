#include "network/sysfs_files.h"

#include <dirent.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/bounded_keep.h"
#include "core/regular_file.h"
#include "core/text.h"

namespace provision::network {

std::optional<std::string> read_attribute(const std::string& path, std::size_t max_bytes) {
    std::string error;
    auto text = read_regular_file(path, max_bytes, error, /*truncate=*/true);
    if (!text) return std::nullopt;
    return trimmed(*text);
}

std::optional<long long> read_number_attribute(const std::string& path) {
    const auto text = read_attribute(path, 32);
    if (!text || text->empty()) return std::nullopt;
    long long value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
    return value;
}

FolderEntries list_folder(const std::string& folder, std::size_t max_entries,
                          const std::function<bool(const std::string&)>& marked) {
    FolderEntries entries;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
    if (!dir) {
        entries.readable = false;
        return entries;
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir.get())) {
        if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
        if (names.size() == kMostFolderEntriesListed) {
            entries.listing_stopped = true;
            break;
        }
        names.emplace_back(entry->d_name);
    }
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    BoundedKeep<std::string> keep({marked ? max_entries : 0, max_entries, KeepEnd::first});
    for (std::string& name : names) {
        const bool matters = marked && marked(name);
        keep.offer(std::move(name), matters);
    }
    entries.left_out += keep.left_out();
    entries.names = keep.take();
    return entries;
}

std::optional<std::string> resolve_within(const std::string& root, const std::string& path) {
    std::unique_ptr<char, void (*)(void*)> resolved(::realpath(path.c_str(), nullptr), std::free);
    if (!resolved) return std::nullopt;
    std::unique_ptr<char, void (*)(void*)> resolved_root(::realpath(root.c_str(), nullptr), std::free);
    if (!resolved_root) return std::nullopt;
    const std::string full(resolved.get()), base(resolved_root.get());
    if (base == "/") return full;
    if (full.size() <= base.size() || full.compare(0, base.size(), base) != 0 || full[base.size()] != '/')
        return std::nullopt;
    return full.substr(base.size());
}

}  // namespace provision::network
