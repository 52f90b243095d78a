#include "native/loader_folders.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision::native {
namespace {

// Real ones hold a line or two; ld.so reads them whole.
constexpr std::size_t kMaxConfBytes = 1024 * 1024;

// `text` cut at each of `separators` (empty parts kept).
std::vector<std::string> split_any(const std::string& text, std::string_view separators) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find_first_of(separators, start), text.size());
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

// The length of the token `name` ($NAME or ${NAME}) at `at` of `entry`, or 0
// where there is none: an unbraced name ends where no letter, digit or '_'
// follows, as ld.so's is_dst reads it ("$ORIGINAL" is no $ORIGIN).
std::size_t token_at(const std::string& entry, std::size_t at, std::string_view name) {
    if (entry.compare(at, 2, "${") == 0 && entry.compare(at + 2, name.size(), name) == 0 &&
        entry.compare(at + 2 + name.size(), 1, "}") == 0)
        return name.size() + 3;
    if (entry.compare(at, 1, "$") != 0 || entry.compare(at + 1, name.size(), name) != 0) return 0;
    const std::size_t end = at + 1 + name.size();
    const bool name_goes_on =
        end < entry.size() && (std::isalnum(static_cast<unsigned char>(entry[end])) || entry[end] == '_');
    return name_goes_on ? 0 : name.size() + 1;
}

// `entry` with $ORIGIN replaced by `origin` (ld.so's _dl_dst_substitute);
// nullopt where it holds $LIB or $PLATFORM, which ld.so expands for the
// machine, or $ORIGIN without an origin (LD_LIBRARY_PATH's: the program's
// folder, the interpreter's here).
std::optional<std::string> expand_tokens(const std::string& entry, const std::optional<std::string>& origin) {
    std::string out;
    for (std::size_t at = 0; at < entry.size();) {
        if (token_at(entry, at, "LIB") != 0 || token_at(entry, at, "PLATFORM") != 0) return std::nullopt;
        if (const std::size_t length = token_at(entry, at, "ORIGIN"); length != 0) {
            if (!origin) return std::nullopt;
            out += *origin;
            at += length;
        } else {
            out += entry[at++];
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::vector<std::string> sorted_entries(const std::string& folder, std::string_view prefix) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return names;
    while (const dirent* entry = ::readdir(dir))
        if (std::string_view(entry->d_name).starts_with(prefix)) names.emplace_back(entry->d_name);
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

const std::vector<std::string>& default_loader_folders() {
    static const std::vector<std::string> folders = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                                                     "/usr/lib64", "/lib", "/usr/lib"};
    return folders;
}

LoaderFolders loader_folders(const std::string& ld_library_path, const std::string& ld_so_conf_dir,
                             const std::vector<std::string>& default_folders) {
    return loader_folders(LoaderSearch{.ld_library_path = ld_library_path,
                                       .ld_so_conf_dir = ld_so_conf_dir,
                                       .default_folders = default_folders,
                                       .needed_by = std::nullopt});
}

LoaderFolders loader_folders(const LoaderSearch& search) {
    LoaderFolders found;
    std::set<std::string> seen;
    auto add = [&](const std::string& folder, const std::string& named_by) {
        if (!folder.empty() && seen.insert(folder).second) found.folders.push_back({folder, named_by});
    };
    // A search path's entry as fillin_rpath reads it (the empty one is the current folder).
    auto add_entry = [&](const std::string& entry, const std::string& named_by,
                         const std::optional<std::string>& origin) {
        if (entry.empty()) return add(".", named_by + " (an empty entry: the current folder)");
        auto folder = expand_tokens(entry, origin);
        if (!folder) return;  // $LIB, $PLATFORM: the machine's; $ORIGIN of the program: not read here
        while (folder->size() > 1 && folder->back() == '/') folder->pop_back();
        add(*folder, named_by);
    };
    const auto& needing = search.needed_by;
    if (needing && needing->rpath && !needing->runpath)
        for (const auto& entry : split(*needing->rpath, ':'))
            add_entry(entry, "DT_RPATH of " + needing->path, needing->origin);
    if (!search.ld_library_path.empty())
        for (const auto& entry : split_any(search.ld_library_path, ":;"))
            add_entry(entry, "LD_LIBRARY_PATH", std::nullopt);
    if (needing && needing->runpath)
        for (const auto& entry : split(*needing->runpath, ':'))
            add_entry(entry, "DT_RUNPATH of " + needing->path, needing->origin);
    for (const auto& name : sorted_entries(search.ld_so_conf_dir)) {
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
        const std::string path = search.ld_so_conf_dir + "/" + name;
        std::string error;
        const auto text = read_regular_file(path, kMaxConfBytes, error);
        if (!text) {
            found.unread.push_back({path, error});
            continue;
        }
        for (const auto& raw : split(*text, '\n')) {
            const std::string line = trimmed(raw.substr(0, raw.find('#')));
            if (line.empty() || line.compare(0, 8, "include ") == 0) continue;
            add(line, path);
        }
    }
    for (const auto& folder : search.default_folders) add(folder, "default");
    return found;
}

}  // namespace provision::native
