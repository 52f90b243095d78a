#include "gpu/nvml_fabric.h"

#include <algorithm>

#include <fmt/format.h>

namespace provision {
namespace {

FabricHealth health_of(unsigned char summary) {
    switch (summary) {
        case 1: return FabricHealth::healthy;
        case 2: return FabricHealth::unhealthy;
        case 3: return FabricHealth::limited_capacity;
        default: return FabricHealth::unknown;
    }
}

std::optional<GpuFabric> with_state(unsigned char state, int status, const unsigned char (&uuid)[16], unsigned version) {
    if (state > 3) return std::nullopt;
    GpuFabric fabric;
    fabric.state = static_cast<FabricState>(state);
    fabric.status = status;
    fabric.cluster_uuid = cluster_uuid_text(uuid);
    fabric.version = version;
    return fabric;
}

}  // namespace

std::string cluster_uuid_text(const unsigned char (&uuid)[16]) {
    if (std::all_of(std::begin(uuid), std::end(uuid), [](unsigned char byte) { return byte == 0; })) return {};
    std::string text;
    for (unsigned char byte : uuid) text += fmt::format("{:02x}", byte);
    return text;
}

std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfo& info) {
    auto fabric = with_state(info.state, info.status, info.cluster_uuid, 1);
    if (fabric) fabric->clique_id = info.clique_id;
    return fabric;
}

std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV2& info) {
    auto fabric = with_state(info.state, info.status, info.cluster_uuid, 2);
    if (!fabric) return fabric;
    fabric->clique_id = info.clique_id;
    fabric->health_mask = info.health_mask;
    return fabric;
}

std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV3& info) {
    auto fabric = with_state(info.state, info.status, info.cluster_uuid, 3);
    if (!fabric) return fabric;
    fabric->clique_id = info.clique_id;
    fabric->health_mask = info.health_mask;
    fabric->health = health_of(info.health_summary);
    return fabric;
}

std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV4& info) {
    auto fabric = with_state(info.state, info.status, info.cluster_uuid, 4);
    if (!fabric) return fabric;
    fabric->health_mask = info.health_mask;
    fabric->health = health_of(info.health_summary);
    const unsigned count = std::min(info.num_cliques, nvml::gpu_fabric_clique_max);
    for (unsigned i = 0; i < count; ++i) fabric->cliques.push_back({info.cliques[i].type, info.cliques[i].id});
    // NCCL's clique is the unicast one (POINTER_UC, type 0): v3's cliqueId.
    const auto unicast = std::find_if(fabric->cliques.begin(), fabric->cliques.end(),
                                      [](const FabricClique& clique) { return clique.type == 0; });
    if (unicast != fabric->cliques.end()) fabric->clique_id = unicast->id;
    return fabric;
}

std::vector<std::string> fabric_health_problems(unsigned mask) {
    struct Field {
        unsigned shift;
        const char* words;
    };
    // NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_*; each _TRUE (1) is the problem.
    static constexpr Field kFields[] = {{0, "bandwidth degraded"},
                                        {2, "route recovery in progress"},
                                        {4, "route unhealthy"},
                                        {6, "access timeout recovery in progress"}};
    std::vector<std::string> problems;
    for (const Field& field : kFields)
        if (((mask >> field.shift) & 0x3u) == 1) problems.emplace_back(field.words);
    // INCORRECT_CONFIGURATION: 0 not supported, 1 none, then the cause.
    static constexpr const char* kConfiguration[] = {nullptr,
                                                     nullptr,
                                                     "incorrect configuration: system GUID",
                                                     "incorrect configuration: chassis serial number",
                                                     "incorrect configuration: no partition",
                                                     "incorrect configuration: too few NVLinks",
                                                     "incorrect configuration: incompatible GPU firmware"};
    const unsigned configuration = (mask >> 8) & 0xFu;
    if (configuration >= std::size(kConfiguration))
        problems.push_back(fmt::format("incorrect configuration ({})", configuration));
    else if (kConfiguration[configuration])
        problems.emplace_back(kConfiguration[configuration]);
    return problems;
}

}  // namespace provision
