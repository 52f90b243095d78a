#include "nccl/nccl_library.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "native/elf_file.h"
#include "native/loader_folders.h"

namespace provision {
namespace {

constexpr std::uint64_t kMaxRodataBytes = std::uint64_t{64} << 20;
constexpr std::size_t kWindowBytes = std::size_t{1} << 20;
constexpr std::string_view kMarker = "NCCL version ";
constexpr std::size_t kLongestBuildString = 96;

bool regular_file(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool version_text(std::string_view text) {
    return !text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; });
}

NcclLibrary library_at(const std::string& path, NcclSource source, std::optional<std::string> version) {
    NcclLibrary library;
    library.path = path;
    library.source = source;
    const auto build = read_nccl_build(path);
    if (build) library.cuda = build->cuda;
    library.version = version ? *version : build ? build->version : std::string();
    return library;
}

}  // namespace

std::string_view to_string(NcclSource source) {
    switch (source) {
        case NcclSource::wheel: return "wheel";
        case NcclSource::torch: return "torch";
        case NcclSource::system: break;
    }
    return "system";
}

std::optional<NcclBuild> find_nccl_build_string(std::string_view bytes) {
    for (std::size_t at = bytes.find(kMarker); at != std::string_view::npos; at = bytes.find(kMarker, at + 1)) {
        const std::size_t start = at + kMarker.size();
        const std::size_t end = bytes.find('\0', start);
        if (end == std::string_view::npos || end - start > kLongestBuildString) continue;
        const std::string_view text = bytes.substr(start, end - start);
        const std::size_t plus = text.rfind("+cuda");  // "... compiled with CUDA 13.0" has none
        if (plus == std::string_view::npos) continue;
        const std::string_view version = text.substr(0, plus);
        const std::string_view cuda = text.substr(plus + 5);
        if (!version_text(version) || !version_text(cuda)) continue;
        return NcclBuild{std::string(version), std::string(cuda)};
    }
    return std::nullopt;
}

std::optional<NcclBuild> read_nccl_build(const std::string& path) {
    auto source = native::FileSource::open(path);
    if (!source) return std::nullopt;
    return read_nccl_build(std::move(*source));
}

std::optional<NcclBuild> read_nccl_build(std::shared_ptr<const native::ByteSource> library) {
    const auto elf = native::ElfFile::parse(std::move(library));
    if (!elf) return std::nullopt;
    const native::ElfSection* rodata = elf->section(".rodata");
    if (!rodata || rodata->size > kMaxRodataBytes || !native::within(rodata->offset, rodata->size, elf->source().size()))
        return std::nullopt;
    // Windows that overlap by the longest string, so none is cut in two.
    std::string window;
    for (std::uint64_t offset = 0; offset < rodata->size; offset += kWindowBytes) {
        const std::uint64_t length = std::min<std::uint64_t>(kWindowBytes + kLongestBuildString + kMarker.size(),
                                                             rodata->size - offset);
        window.resize(static_cast<std::size_t>(length));
        if (!elf->source().read_at(rodata->offset + offset, window.data(), window.size())) return std::nullopt;
        if (auto build = find_nccl_build_string(window)) return build;
    }
    return std::nullopt;
}

std::optional<NcclLibrary> find_nccl_library(const NcclSearch& search) {
    const auto version_in = [&](const std::string& site) {
        return search.wheel_version ? search.wheel_version(site) : std::nullopt;
    };
    const auto wheel_in = [](const std::string& site) { return site + "/nvidia/nccl/lib/libnccl.so.2"; };
    // Only a CUDA build of torch loads NCCL (libtorch_cuda.so needs it).
    if (search.torch_site.empty() || !regular_file(search.torch_site + "/torch/lib/libtorch_cuda.so")) return std::nullopt;
    {
        if (const std::string path = wheel_in(search.torch_site); regular_file(path))
            return library_at(path, NcclSource::wheel, version_in(search.torch_site));
        if (const std::string path = search.torch_site + "/torch/lib/libnccl.so.2"; regular_file(path))
            return library_at(path, NcclSource::torch, std::nullopt);
    }
    const auto folders = native::loader_folders(search.ld_library_path, search.ld_so_conf_dir, search.default_folders);
    for (const auto& [folder, named_by] : folders.folders)
        if (const std::string path = folder + "/libnccl.so.2"; regular_file(path))
            return library_at(path, NcclSource::system, std::nullopt);
    for (const std::string& site : search.site_packages)
        if (const std::string path = wheel_in(site); regular_file(path))
            return library_at(path, NcclSource::wheel, version_in(site));
    return std::nullopt;
}

}  // namespace provision
