// Gathers the workload's NCCL (nccl/nccl_library.h) from its site folders,
// the packages installed there and the loader's folders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nccl/nccl_library.h"
#include "packages/site_packages.h"

namespace provision {

// `library_path` is the workload's LD_LIBRARY_PATH.  In test builds
// `system_libraries` (PROVISION_TEST_SYSTEM_LIBRARIES: colon-separated
// folders, possibly none) replaces the system's library folders and
// ld.so.conf.d, so that no test depends on the machine's own NCCL.
std::optional<NcclLibrary> find_workload_nccl(const std::string& library_path,
                                              const std::optional<std::string>& system_libraries,
                                              const std::vector<std::string>& site_packages,
                                              const PackageIndex& packages);

}  // namespace provision
