// The NCCL the workload's PyTorch will load, found from files, without
// starting Python or loading the library (docs/DESIGN.md, "NCCL's paths").
// None without a CUDA build of torch (torch/lib/libtorch_cuda.so), which is
// what loads NCCL; with one, the first of:
//
//   1. the nvidia-nccl-cu* wheel beside torch: PyTorch's CUDA wheels carry
//      the DT_RPATH $ORIGIN/../../nvidia/nccl/lib, searched before anything
//      else, so <torch's site folder>/nvidia/nccl/lib/libnccl.so.2 wins;
//   2. a copy beside torch (torch/lib/libnccl.so.2, older wheels);
//   3. the loader's folders: LD_LIBRARY_PATH, /etc/ld.so.conf.d, the
//      system's (a source build against the system's NCCL, NGC images);
//   4. a wheel in another of the workload's site folders (torch's preload
//      fallback globs sys.path for nvidia/nccl/lib).
// Its version: the wheel's METADATA, else the build string NCCL's init.cc
// puts in .rodata ("NCCL version 2.28.9+cuda13.0"), which also names the
// CUDA it was built for.
#pragma once

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
    std::string version;  // "2.28.9"; empty when neither METADATA nor the library says
    std::string cuda;     // "13.0", the CUDA it was built for; empty when unknown
    std::string path;
    NcclSource source = NcclSource::system;
};

struct NcclSearch {
    std::string torch_site;                  // the site folder holding torch; empty without torch
    std::vector<std::string> site_packages;  // the workload's, in order
    std::string ld_library_path;
    std::string ld_so_conf_dir = "/etc/ld.so.conf.d";
    std::vector<std::string> default_folders;  // the loader's own
    // The version of the nvidia-nccl-cu* distribution installed in a site
    // folder, when one is.
    std::function<std::optional<std::string>(const std::string& site)> wheel_version;
};

std::optional<NcclLibrary> find_nccl_library(const NcclSearch& search);

// The build string's parts.
struct NcclBuild {
    std::string version;  // "2.28.9" (with NCCL_SUFFIX, if the build had one)
    std::string cuda;     // "13.0"
};
// Finds "NCCL version X.Y.Z[suffix]+cudaA.B" (NUL-terminated) in `bytes`.
std::optional<NcclBuild> find_nccl_build_string(std::string_view bytes);
// Reads the library's .rodata (at most 64 MiB, in windows) for it.
std::optional<NcclBuild> read_nccl_build(const std::string& path);
std::optional<NcclBuild> read_nccl_build(std::shared_ptr<const native::ByteSource> library);

}  // namespace provision
