// The NCCL the workload's PyTorch will load, found from files, without
// starting Python or loading the library (docs/DESIGN.md, "NCCL's paths").
// None without a CUDA build of torch (torch/lib/libtorch_cuda.so), which is
// what loads NCCL (its DT_NEEDED libnccl.so.2); with one, the first
// libnccl.so.2 of:
//
//   1. the loader's folders, in glibc's order (native/loader_folders.h),
//      from libtorch_cuda.so's own DT_RPATH / DT_RUNPATH: PyTorch's CUDA
//      wheels carry the DT_RPATH $ORIGIN/../../nvidia/nccl/lib, searched
//      before LD_LIBRARY_PATH, so <torch's site folder>/nvidia/nccl/lib
//      wins there; a build linked with --enable-new-dtags has a DT_RUNPATH,
//      searched after it; then /etc/ld.so.conf.d and the system's folders
//      (a source build against the system's NCCL, NGC images);
//   2. a wheel in one of the workload's site folders (torch's preload
//      fallback globs sys.path for nvidia/nccl/lib).
//
// Its version is the version of that file: the nvidia-nccl-cu* dist-info
// whose RECORD lists it (and, where RECORD gives one, with the file's size)
// gives it from METADATA, and then nothing else is read; otherwise the build
// string NCCL's init.cc puts in .rodata ("NCCL version 2.28.9+cuda13.0"),
// which also names the CUDA it was built for; otherwise unknown.  A version
// that does not read as one (nccl/nccl_version.h) is unknown too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native/byte_source.h"

namespace provision {

enum class NcclSource { wheel, torch, system };
std::string_view to_string(NcclSource source);  // "wheel", "torch", "system"

struct NcclLibrary {
    std::string version{};  // "2.28.9"; empty when unknown
    // The CUDA it was built for: "13.0" from the build string, "13" from the
    // name of the wheel whose RECORD lists it (nvidia-nccl-cu13); empty when
    // unknown.
    std::string cuda{};
    std::string path{};
    NcclSource source = NcclSource::system;
    std::string found_by{};  // the loader folder's origin ("DT_RPATH of ...", "LD_LIBRARY_PATH", ...), for --explain
};

// The distribution that installed a library file, by its RECORD.
struct NcclWheel {
    std::string version;     // METADATA's, as written
    std::string cuda_major;  // "13" of nvidia-nccl-cu13; empty when the name says none
    std::optional<std::uint64_t> recorded_size;  // RECORD's size of the file, where it gives one
};

struct NcclSearch {
    std::string torch_site;                  // the site folder holding torch; empty without torch
    std::vector<std::string> site_packages;  // the workload's, in order
    std::string ld_library_path;
    std::string ld_so_conf_dir = "/etc/ld.so.conf.d";
    std::vector<std::string> default_folders;  // the loader's own
    // The nvidia-nccl-cu* distribution installed in `site` whose RECORD lists
    // `relative` ("nvidia/nccl/lib/libnccl.so.2"), when one does.
    std::function<std::optional<NcclWheel>(const std::string& site, const std::string& relative)> wheel_owning;
};

std::optional<NcclLibrary> find_nccl_library(const NcclSearch& search);

// The build string's parts.
struct NcclBuild {
    std::string version;  // "2.28.9" (with NCCL_SUFFIX, if the build had one)
    std::string cuda;     // "13.0"
};
// Finds "NCCL version X.Y.Z[suffix]+cudaA.B" (NUL-terminated) in `bytes`,
// in one pass: each byte is looked at a bounded number of times however
// the markers and NULs lie.  `examined`, when given, is increased by the
// bytes looked at (for tests to count the work, never the time).
std::optional<NcclBuild> find_nccl_build_string(std::string_view bytes, std::uint64_t* examined = nullptr);
// Reads the library's .rodata (at most 64 MiB, in windows) for it.
std::optional<NcclBuild> read_nccl_build(const std::string& path);
std::optional<NcclBuild> read_nccl_build(std::shared_ptr<const native::ByteSource> library,
                                         std::uint64_t* examined = nullptr);

}  // namespace provision
