#include "app/workload_nccl.h"

#include <filesystem>

#include "native/loader_folders.h"
#include "packages/package_name.h"

namespace provision {
namespace {

std::string folder_of(const std::string& metadata) {  // ".../site-packages/torch-2.11.0.dist-info" -> ".../site-packages"
    return std::filesystem::path(metadata).parent_path().string();
}

}  // namespace

std::optional<NcclLibrary> find_workload_nccl(const Options& options, const std::vector<std::string>& site_packages,
                                              const PackageIndex& packages) {
    NcclSearch search;
    search.site_packages = site_packages;
    if (const InstalledPackage* torch = packages.find("torch")) search.torch_site = folder_of(torch->location);
    search.ld_library_path = options.library_path;
    search.default_folders = native::default_loader_folders();
    if (const auto& folders = options.test.system_libraries) {
        search.ld_so_conf_dir.clear();
        search.default_folders.clear();
        for (const auto& folder : native::split(*folders, ':'))
            if (!folder.empty()) search.default_folders.push_back(folder);
    }
    // The nvidia-nccl-cu* wheels (one a CUDA major) carry the version.
    search.wheel_version = [&packages](const std::string& site) -> std::optional<std::string> {
        for (const InstalledPackage& package : packages.packages()) {
            const std::string name = normalize_package_name(package.name);
            if (name.rfind("nvidia-nccl-cu", 0) == 0 && folder_of(package.location) == site) return package.version;
        }
        return std::nullopt;
    };
    return find_nccl_library(search);
}

}  // namespace provision
