#include "health/busy_gpu.h"

#include <fmt/format.h>

namespace provision {

std::optional<std::string> busy_reason(const Gpu& gpu) {
    const GpuHealth& health = gpu.health;
    const unsigned others = health.other_processes.value_or(0);
    if (health.compute_mode == ComputeMode::prohibited) return std::string("its compute mode is prohibited: no process may create a context");
    if (others == 0) return std::nullopt;
    std::string why = fmt::format("{} other process{} hold{}", others, others == 1 ? "" : "es", others == 1 ? "s" : "");
    why += health.memory_used_mib ? fmt::format(" {} MiB of its memory", *health.memory_used_mib) : std::string(" it");
    if (health.compute_mode == ComputeMode::exclusive_process) why += " in exclusive-process mode, so no other context fits";
    return why;
}

std::optional<std::string> memory_held(const Gpu& gpu, std::uint64_t min_mib) {
    const auto used = gpu.health.memory_used_mib;
    if (!used || *used < min_mib) return std::nullopt;
    return fmt::format("NVML lists no process, yet {} MiB of its memory is in use (by a process it does "
                       "not list, such as another container's)",
                       *used);
}

}  // namespace provision
