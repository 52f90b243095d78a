#include "native/cuda_compat.h"

#include <dirent.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision::native {
namespace {

// Real ones hold a line or two; ld.so reads them whole.
constexpr std::size_t kMaxConfBytes = 1024 * 1024;

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

// The names in `folder` that start with `prefix`, sorted.
std::vector<std::string> sorted_entries(const std::string& folder, std::string_view prefix = "") {
    std::vector<std::string> names;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return names;
    while (const dirent* entry = ::readdir(dir))
        if (std::string_view(entry->d_name).starts_with(prefix)) names.emplace_back(entry->d_name);
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

// The version of the folder's libcuda ("libcuda.so.570.124.06" -> "570.124.06");
// empty when it holds no libcuda.so at all, "unknown" when only unversioned names.
std::string libcuda_version(const std::string& folder) {
    std::string found;
    const std::string prefix = "libcuda.so";
    for (const auto& name : sorted_entries(folder, prefix)) {
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

CompatScan find_cuda_compat_libraries(const std::string& ld_library_path, const std::string& ld_so_conf_dir) {
    CompatScan scan;
    std::set<std::string> considered;  // listed already, with a libcuda or not
    auto consider = [&](const std::string& folder, const std::string& named_by) {
        if (!is_cuda_compat_folder(folder) || !considered.insert(folder).second) return;
        const std::string version = libcuda_version(folder);
        if (!version.empty()) scan.found.push_back({folder, named_by, version});
    };
    for (const auto& folder : split(ld_library_path, ':')) consider(folder, "LD_LIBRARY_PATH");
    for (const auto& name : sorted_entries(ld_so_conf_dir)) {
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
        const std::string path = ld_so_conf_dir + "/" + name;
        std::string error;
        const auto text = read_regular_file(path, kMaxConfBytes, error);
        if (!text) {
            scan.notes.push_back(fmt::format("{} is not read for CUDA compat folders: {}", path, error));
            continue;
        }
        for (const auto& raw : split(*text, '\n')) {
            const std::string line = trimmed(raw.substr(0, raw.find('#')));
            if (line.empty() || line.compare(0, 8, "include ") == 0) continue;
            consider(line, path);
        }
    }
    return scan;
}

}  // namespace provision::native
