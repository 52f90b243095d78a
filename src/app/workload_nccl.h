// Gathers the workload's NCCL (nccl/nccl_library.h) from its site folders,
// the packages installed there and the loader's folders.
#pragma once

#include <optional>

#include "app/options.h"
#include "nccl/nccl_library.h"
#include "packages/site_packages.h"

namespace provision {

// In test builds PROVISION_TEST_SYSTEM_LIBRARIES (colon-separated folders,
// possibly none) replaces the system's library folders and ld.so.conf.d, so
// that no test depends on the machine's own NCCL.
std::optional<NcclLibrary> find_workload_nccl(const Options& options, const std::vector<std::string>& site_packages,
                                              const PackageIndex& packages);

}  // namespace provision
