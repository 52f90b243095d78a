#include "python/site_layout.h"

#include <fmt/format.h>

#include "python/file_probe.h"

namespace provision {

std::vector<std::string> version_folders(const std::string& lib, const std::optional<PythonVersion>& version) {
    if (version) return {fmt::format("{}/python{}", lib, version->str())};
    std::vector<std::string> folders;
    for (const auto& name : file_probe::folder_names(lib))
        if (PythonVersion::from_file_name(name) && file_probe::is_directory(lib + "/" + name))
            folders.push_back(lib + "/" + name);
    return folders;
}

SiteLayout site_layout_of(const std::string& prefix, const std::optional<PythonVersion>& version) {
    if (file_probe::is_directory(prefix + "/lib/python3/dist-packages")) return SiteLayout::debian;
    for (const auto& folder : version_folders(prefix + "/local/lib", version))
        if (file_probe::is_directory(folder + "/dist-packages")) return SiteLayout::debian;
    return SiteLayout::cpython;
}

std::vector<std::string> prefix_site_folders(const std::string& prefix, SiteLayout layout, bool in_venv,
                                             const std::optional<PythonVersion>& version) {
    std::vector<std::string> folders;
    if (layout == SiteLayout::cpython) {
        for (const auto& folder : version_folders(prefix + "/lib", version)) folders.push_back(folder + "/site-packages");
        return folders;
    }
    // Debian's site.py (/usr/lib/python3.Y/site.py, getsitepackages).
    const auto versioned = version_folders(prefix + "/lib", version);
    if (in_venv)
        for (const auto& folder : versioned) folders.push_back(folder + "/site-packages");
    for (const auto& folder : version_folders(prefix + "/local/lib", version))
        folders.push_back(folder + "/dist-packages");
    folders.push_back(prefix + "/lib/python3/dist-packages");
    for (const auto& folder : versioned) folders.push_back(folder + "/dist-packages");
    return folders;
}

}  // namespace provision
