#include "app/workload_nccl.h"

#include <algorithm>
#include <filesystem>

#include "core/regular_file.h"
#include "native/loader_folders.h"
#include "packages/installed_files.h"
#include "packages/package_name.h"

namespace provision {
namespace {

constexpr std::string_view kNcclWheelPrefix = "nvidia-nccl-cu";

std::string folder_of(const std::string& metadata) {  // ".../site-packages/torch-2.11.0.dist-info" -> ".../site-packages"
    return std::filesystem::path(metadata).parent_path().string();
}

}  // namespace

std::optional<NcclLibrary> find_workload_nccl(const std::string& library_path,
                                              const std::optional<std::string>& system_libraries,
                                              const std::vector<std::string>& site_packages,
                                              const PackageIndex& packages) {
    NcclSearch search;
    search.site_packages = site_packages;
    if (const InstalledPackage* torch = packages.find("torch")) search.torch_site = folder_of(torch->location);
    search.ld_library_path = library_path;
    search.default_folders = native::default_loader_folders();
    if (const auto& folders = system_libraries) {
        search.ld_so_conf_dir.clear();
        search.default_folders.clear();
        for (const auto& folder : native::split(*folders, ':'))
            if (!folder.empty()) search.default_folders.push_back(folder);
    }
    // The nvidia-nccl-cu* wheels (one a CUDA major) carry the version; the
    // one whose RECORD lists the file is the one installed there.
    search.wheel_owning = [&packages](const std::string& site,
                                      const std::string& relative) -> std::optional<NcclWheel> {
        for (const InstalledPackage& package : packages.packages()) {
            const std::string name = normalize_package_name(package.name);
            if (!name.starts_with(kNcclWheelPrefix) || folder_of(package.location) != site) continue;
            std::string error;
            const auto record = read_regular_file(package.location + "/RECORD", kMaxRecordBytes, error);
            if (!record) continue;
            const auto size = recorded_size(*record, relative);
            if (!size) continue;
            const std::string major = name.substr(kNcclWheelPrefix.size());
            const bool digits = !major.empty() && major.size() <= 3 &&
                                std::all_of(major.begin(), major.end(), [](char c) { return c >= '0' && c <= '9'; });
            return NcclWheel{.version = package.version, .cuda_major = digits ? major : "", .recorded_size = *size};
        }
        return std::nullopt;
    };
    return find_nccl_library(search);
}

}  // namespace provision
