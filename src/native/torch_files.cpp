#include "native/torch_files.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "native/elf_file.h"

namespace provision {
namespace {

bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

}  // namespace

std::optional<TorchFiles> read_torch_files(const std::vector<std::string>& site_packages) {
    for (const auto& folder : site_packages) {
        const std::string torch = folder + "/torch";
        const std::string version_py = torch + "/version.py";
        if (!exists(version_py)) continue;
        TorchFiles files;
        files.folder = torch;
        auto build = native::read_torch_build(version_py);
        if (!build) {
            files.notes.push_back(fmt::format("torch's build is unknown: {}", build.error().message));
            return files;
        }
        files.build = *build;
        const std::string library = torch + "/lib/libtorch_cuda.so";
        if (files.build.backend != native::TorchBackend::cuda || !exists(library)) return files;
        files.library = library;
        auto elf = native::ElfFile::open(library);
        if (!elf) {
            files.notes.push_back(fmt::format("torch's device code is unknown: {}", elf.error().message));
            return files;
        }
        auto summary = native::read_fatbin(*elf);
        if (!summary) {
            files.notes.push_back(fmt::format("torch's device code is unknown: {}", summary.error().message));
            return files;
        }
        files.device_code = std::move(*summary);
        return files;
    }
    return std::nullopt;
}

}  // namespace provision
