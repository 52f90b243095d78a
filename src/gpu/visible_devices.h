// CUDA_VISIBLE_DEVICES, read with CUDA's rules, against the GPUs of a
// machine in CUDA's enumeration order.
//
// Rules, as measured against CUDA itself (tests/fixtures/cuda_visible_devices.tsv):
//   unset            every GPU, in order
//   ""               no GPU
//   "2,0"            GPU 2 then GPU 0; the workload calls them 0 and 1
//   "GPU-8932f937"   a UUID, in full or any prefix that names exactly one GPU;
//                    "GPU-" exactly so, the hex in either case; what follows
//                    a whole UUID is ignored ("GPU-<uuid>-extra" names it),
//                    while a prefix must end with the entry ("GPU-8932f9zz"
//                    names none)
//   " 0", "0a", "+0" an index as strtoul reads it, cut to 32 bits
//   "0,2,-1,1"       entries are read up to the first invalid one: GPUs 0, 2
// An entry is invalid when it is neither an index nor "GPU-" and a UUID, an
// index is out of range, or a UUID prefix matches no GPU or several.  The
// same GPU named twice the same way (two indices or two UUIDs) makes CUDA
// fail altogether: no GPU; once by index and once by UUID, it counts once.
// "MIG-" entries name MIG instances, which only libcuda can resolve: they end
// the list here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpu/inventory.h"

namespace provision {

struct VisibleDevices {
    std::vector<std::size_t> positions;  // into the host list, in the workload's order
    std::vector<std::string> notes;      // why entries were ignored, in words for a user
};

// `host_uuids`: every GPU's "GPU-..." UUID in CUDA's order.
VisibleDevices select_visible_devices(const std::vector<std::string>& host_uuids,
                                      const std::optional<std::string>& cuda_visible_devices);

// Keeps the visible GPUs of `host_gpus` (CUDA's order) in `inventory.gpus`,
// numbered as the workload sees them, and counts the rest in hidden_gpus.
void apply_visible_devices(const std::vector<Gpu>& host_gpus,
                           const std::optional<std::string>& cuda_visible_devices, Inventory& inventory);

}  // namespace provision
