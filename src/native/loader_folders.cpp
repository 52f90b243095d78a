#include "native/loader_folders.h"

#include <dirent.h>

#include <algorithm>
#include <set>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision::native {
namespace {

// Real ones hold a line or two; ld.so reads them whole.
constexpr std::size_t kMaxConfBytes = 1024 * 1024;

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
    LoaderFolders found;
    std::set<std::string> seen;
    auto add = [&](const std::string& folder, const std::string& named_by) {
        if (!folder.empty() && seen.insert(folder).second) found.folders.push_back({folder, named_by});
    };
    if (!ld_library_path.empty())
        for (const auto& folder : split(ld_library_path, ':')) add(folder, "LD_LIBRARY_PATH");
    for (const auto& name : sorted_entries(ld_so_conf_dir)) {
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
        const std::string path = ld_so_conf_dir + "/" + name;
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
    for (const auto& folder : default_folders) add(folder, "default");
    return found;
}

}  // namespace provision::native
