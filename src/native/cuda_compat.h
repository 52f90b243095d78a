// CUDA's forward-compatibility libraries (the toolkit's `compat` folder,
// /usr/local/cuda-X.Y/compat, with a newer libcuda) on the workload's
// library path: the loader then takes that libcuda instead of the driver's,
// which works only on data-center GPUs with a driver branch it supports
// (errors 803 and 804 elsewhere).  Found from LD_LIBRARY_PATH and the
// ld.so configuration, without loading anything.
#pragma once

#include <string>
#include <vector>

namespace provision::native {

struct CompatLibraries {
    std::string folder;           // "/usr/local/cuda-12.8/compat"
    std::string named_by;         // "LD_LIBRARY_PATH" or "/etc/ld.so.conf.d/cuda-compat.conf"
    std::string libcuda_version;  // "570.124.06", from its libcuda.so.570.124.06
};

// Whether `folder` is a CUDA toolkit's compat folder by its name: its last
// component is "compat" and an earlier one starts with "cuda".
bool is_cuda_compat_folder(const std::string& folder);

struct CompatScan {
    std::vector<CompatLibraries> found;
    std::vector<std::string> notes;  // configuration files that could not be read, and why
};

// The compat folders named by `ld_library_path` (colon-separated) and by the
// *.conf files of `ld_so_conf_dir` (each at most 1 MiB), in that order, that
// hold a libcuda.so.  Each folder is listed once, however often it is named.
CompatScan find_cuda_compat_libraries(const std::string& ld_library_path, const std::string& ld_so_conf_dir);

}  // namespace provision::native
