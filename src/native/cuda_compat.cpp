#include "native/cuda_compat.h"

#include <algorithm>

#include <fmt/format.h>

#include "native/loader_folders.h"

namespace provision::native {
namespace {

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
    LoaderFolders folders = loader_folders(ld_library_path, ld_so_conf_dir);
    for (const auto& [path, why] : folders.unread)
        scan.notes.push_back(fmt::format("{} is not read for CUDA compat folders: {}", path, why));
    for (const auto& [folder, named_by] : folders.folders) {
        if (!is_cuda_compat_folder(folder)) continue;
        const std::string version = libcuda_version(folder);
        if (!version.empty()) scan.found.push_back({folder, named_by, version});
    }
    return scan;
}

}  // namespace provision::native
