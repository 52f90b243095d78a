#include "nccl/nccl_library.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "native/elf_file.h"
#include "native/loader_folders.h"
#include "nccl/nccl_version.h"

namespace provision {
namespace {

constexpr std::uint64_t kMaxRodataBytes = std::uint64_t{64} << 20;
constexpr std::size_t kWindowBytes = std::size_t{1} << 20;
constexpr std::string_view kMarker = "NCCL version ";
constexpr std::size_t kLongestBuildString = 96;
constexpr std::string_view kLibrary = "libnccl.so.2";

std::optional<std::uint64_t> regular_file_size(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return static_cast<std::uint64_t>(info.st_size);
}

bool version_text(std::string_view text) {
    return !text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; });
}

// "$ORIGIN/../../nvidia/nccl/lib" expanded gives ".../torch/lib/../../...":
// the path as the kernel resolves it where no folder on the way is a link.
// A file of the current folder stays "./libnccl.so.2".
std::string normal(const std::string& path) {
    std::string text = std::filesystem::path(path).lexically_normal().string();
    return text.find('/') == std::string::npos ? "./" + text : text;
}

// The version and CUDA of the file at `path`: its wheel's, where the
// dist-info whose RECORD lists it agrees with it (its size, where RECORD
// gives one), else its build string, else unknown.
void read_version(NcclLibrary& library, const std::optional<NcclWheel>& wheel, std::uint64_t size) {
    if (wheel && parse_nccl_version(wheel->version) && (!wheel->recorded_size || *wheel->recorded_size == size)) {
        library.version = wheel->version;
        library.cuda = wheel->cuda_major;
        return;
    }
    const auto build = read_nccl_build(library.path);
    if (!build) return;
    if (parse_nccl_version(build->version)) library.version = build->version;
    library.cuda = build->cuda;
}

class LibraryFinder {
public:
    explicit LibraryFinder(const NcclSearch& search)
        : search_(search), torch_lib_(normal(search.torch_site + "/torch/lib")) {}

    // The library at `path` (a regular file), with what it is.
    NcclLibrary at(const std::string& path, std::uint64_t size, const std::string& found_by) const {
        NcclLibrary library;
        library.path = normal(path);
        library.found_by = found_by;
        const std::string folder = std::filesystem::path(library.path).parent_path().string();
        library.source = folder == torch_lib_                  ? NcclSource::torch
                         : folder.ends_with("/nvidia/nccl/lib") ? NcclSource::wheel
                                                                : NcclSource::system;
        read_version(library, wheel_owning(library.path), size);
        return library;
    }

private:
    // The distribution of a site folder whose RECORD lists the file.
    std::optional<NcclWheel> wheel_owning(const std::string& path) const {
        if (!search_.wheel_owning) return std::nullopt;
        std::vector<std::string> sites = {search_.torch_site};
        sites.insert(sites.end(), search_.site_packages.begin(), search_.site_packages.end());
        for (const std::string& site : sites) {
            const std::string root = normal(site + "/");
            if (site.empty() || !path.starts_with(root)) continue;
            if (auto wheel = search_.wheel_owning(site, path.substr(root.size()))) return wheel;
        }
        return std::nullopt;
    }

    const NcclSearch& search_;
    std::string torch_lib_;
};

}  // namespace

std::string_view to_string(NcclSource source) {
    switch (source) {
        case NcclSource::wheel: return "wheel";
        case NcclSource::torch: return "torch";
        case NcclSource::system: break;
    }
    return "system";
}

std::optional<NcclBuild> find_nccl_build_string(std::string_view bytes, std::uint64_t* examined) {
    std::uint64_t work = 0;
    // The first NUL at or after the latest marker's text: found once and
    // kept while later markers start before it, so the searches for NULs
    // cover disjoint ranges (a run of markers without a NUL is not searched
    // to its end once per marker).
    std::size_t nul = 0;
    bool nul_known = false;
    std::optional<NcclBuild> found;
    for (std::size_t from = 0; from < bytes.size();) {
        const std::size_t at = bytes.find(kMarker, from);
        work += (at == std::string_view::npos ? bytes.size() : at + kMarker.size()) - from;
        if (at == std::string_view::npos) break;
        const std::size_t start = at + kMarker.size();
        from = start;  // the marker cannot overlap itself
        if (!nul_known || (nul != std::string_view::npos && nul < start)) {
            nul = bytes.find('\0', start);
            nul_known = true;
            work += (nul == std::string_view::npos ? bytes.size() : nul + 1) - start;
        }
        if (nul == std::string_view::npos || nul - start > kLongestBuildString) continue;
        const std::string_view text = bytes.substr(start, nul - start);
        const std::size_t plus = text.rfind("+cuda");  // "... compiled with CUDA 13.0" has none
        if (plus == std::string_view::npos) continue;
        const std::string_view version = text.substr(0, plus);
        const std::string_view cuda = text.substr(plus + 5);
        if (!version_text(version) || !version_text(cuda)) continue;
        found = NcclBuild{std::string(version), std::string(cuda)};
        break;
    }
    if (examined) *examined += work;
    return found;
}

std::optional<NcclBuild> read_nccl_build(const std::string& path) {
    auto source = native::FileSource::open(path);
    if (!source) return std::nullopt;
    return read_nccl_build(std::move(*source));
}

std::optional<NcclBuild> read_nccl_build(std::shared_ptr<const native::ByteSource> library, std::uint64_t* examined) {
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
        if (auto build = find_nccl_build_string(window, examined)) return build;
    }
    return std::nullopt;
}

std::optional<NcclLibrary> find_nccl_library(const NcclSearch& search) {
    // Only a CUDA build of torch loads NCCL (libtorch_cuda.so needs it).
    if (search.torch_site.empty()) return std::nullopt;
    const std::string torch_cuda = search.torch_site + "/torch/lib/libtorch_cuda.so";
    if (!regular_file_size(torch_cuda)) return std::nullopt;
    const LibraryFinder finder(search);

    // libtorch_cuda.so's own search paths; a file the loader could not read
    // has none to give.
    native::LoaderSearch loader{.ld_library_path = search.ld_library_path,
                                .ld_so_conf_dir = search.ld_so_conf_dir,
                                .default_folders = search.default_folders,
                                .needed_by = std::nullopt};
    if (const auto elf = native::ElfFile::open(torch_cuda))
        if (const auto paths = elf->library_search_paths())
            loader.needed_by = native::NeedingObject{.path = torch_cuda,
                                                     .origin = search.torch_site + "/torch/lib",
                                                     .rpath = paths->rpath,
                                                     .runpath = paths->runpath};
    for (const auto& [folder, named_by] : native::loader_folders(loader).folders) {
        const std::string path = folder + "/" + std::string(kLibrary);
        if (const auto size = regular_file_size(path)) return finder.at(path, *size, named_by);
    }
    for (const std::string& site : search.site_packages) {
        const std::string path = site + "/nvidia/nccl/lib/" + std::string(kLibrary);
        if (const auto size = regular_file_size(path))
            return finder.at(path, *size, "torch's preload of sys.path's nvidia/nccl/lib");
    }
    return std::nullopt;
}

}  // namespace provision
