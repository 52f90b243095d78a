// A busy GPU is not a broken GPU: other processes hold it (NVML's process
// list, provision's own workers left out), or its compute mode lets no
// further context in.  Read without a context, so that --repeat never
// takes memory from a job to prove a GPU, and a GPU full of someone else's
// memory is never called failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpu/inventory.h"

namespace provision {

// Why the GPU is busy ("2 other processes hold 79000 MiB", "its compute
// mode is prohibited"), or nullopt when nothing else holds it.
std::optional<std::string> busy_reason(const Gpu& gpu);

// Why a GPU that had no room for a context is held though NVML lists no
// process on it ("NVML lists no process, yet 79000 MiB of its memory is in
// use"): at least `min_mib` in use, as a process of another container holds
// it (NVML lists only this container's).  nullopt below that.
std::optional<std::string> memory_held(const Gpu& gpu, std::uint64_t min_mib);

}  // namespace provision
