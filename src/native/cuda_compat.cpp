#include "native/cuda_compat.h"

#include <dirent.h>

#include <algorithm>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision::native {
namespace {

constexpr std::size_t kMaxConfBytes = 64 * 1024;

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

std::vector<std::string> sorted_entries(const std::string& folder) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return names;
    while (const dirent* entry = ::readdir(dir)) names.emplace_back(entry->d_name);
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

// The version of the folder's libcuda ("libcuda.so.570.124.06" -> "570.124.06");
// empty when it holds no libcuda.so at all, "unknown" when only unversioned names.
std::string libcuda_version(const std::string& folder) {
    std::string found;
    for (const auto& name : sorted_entries(folder)) {
        const std::string prefix = "libcuda.so";
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = name.substr(prefix.size());
        if (rest.size() > 1 && rest.front() == '.' && std::count(rest.begin(), rest.end(), '.') >= 2)
            return rest.substr(1);  // the full version, not the soname's major
        if (found.empty()) found = "unknown";
    }
    return found;
}

}  // namespace

bool is_cuda_compat_folder(const std::string& folder) {
    std::vector<std::string> parts;
    for (auto& part : split(folder, '/'))
        if (!part.empty() && part != ".") parts.push_back(part);
    if (parts.size() < 2 || parts.back() != "compat") return false;
    return std::any_of(parts.begin(), parts.end() - 1,
                       [](const std::string& part) { return part.compare(0, 4, "cuda") == 0; });
}

std::vector<CompatLibraries> find_cuda_compat_libraries(const std::string& ld_library_path,
                                                        const std::string& ld_so_conf_dir) {
    std::vector<CompatLibraries> found;
    auto consider = [&](const std::string& folder, const std::string& named_by) {
        if (!is_cuda_compat_folder(folder)) return;
        for (const auto& known : found)
            if (known.folder == folder) return;
        const std::string version = libcuda_version(folder);
        if (!version.empty()) found.push_back({folder, named_by, version});
    };
    for (const auto& folder : split(ld_library_path, ':')) consider(folder, "LD_LIBRARY_PATH");
    for (const auto& name : sorted_entries(ld_so_conf_dir)) {
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
        const std::string path = ld_so_conf_dir + "/" + name;
        std::string error;
        const auto text = read_regular_file(path, kMaxConfBytes, error);
        if (!text) continue;
        for (const auto& raw : split(*text, '\n')) {
            const std::string line = trimmed(raw.substr(0, raw.find('#')));
            if (line.empty() || line.compare(0, 8, "include ") == 0) continue;
            consider(line, path);
        }
    }
    return found;
}

}  // namespace provision::native
