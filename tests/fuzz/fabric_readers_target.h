// Fuzz target: the multi-node NVLink stage's readers.  The first byte picks
// the reader: NVML's fabric info structs v1 to v4 (gpu/nvml_fabric.h) from
// the bytes that follow, as a driver might fill them, or /proc/devices'
// text (fabric/imex_channels.h).  Beyond "no crash, no sanitizer report" it
// checks that a read fabric's state is one NVML defines, its cluster UUID is
// 32 hex digits or empty (all zero), v4 keeps at most 64 cliques, the
// health mask's problems are words of the fixed list, and a major from
// /proc/devices is listed under "Character devices:" with that name.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "fabric/imex_channels.h"
#include "fuzz/fuzz_support.h"
#include "gpu/nvml_fabric.h"

namespace fuzz::fabric_readers {

template <typename Info>
Info from_bytes(std::string_view bytes) {
    Info info{};
    std::memcpy(&info, bytes.data(), std::min(sizeof info, bytes.size()));
    return info;
}

inline void check_fabric(const std::optional<provision::GpuFabric>& fabric) {
    if (!fabric) return;
    FUZZ_CHECK(static_cast<int>(fabric->state) >= 0 && static_cast<int>(fabric->state) <= 3);
    FUZZ_CHECK(fabric->cluster_uuid.empty() || fabric->cluster_uuid.size() == 32);
    FUZZ_CHECK(fabric->cluster_uuid.find_first_not_of("0123456789abcdef") == std::string::npos);
    FUZZ_CHECK(fabric->cliques.size() <= provision::nvml::gpu_fabric_clique_max);
    if (fabric->health_mask)
        for (const auto& problem : provision::fabric_health_problems(*fabric->health_mask))
            FUZZ_CHECK(!problem.empty() && printable_as_is(problem));
}

inline void one_input(std::string_view input) {
    if (input.empty()) return;
    const char which = input[0];
    const std::string_view rest = input.substr(1);
    switch (which % 5) {
        case 0: check_fabric(provision::fabric_from(from_bytes<provision::nvml::GpuFabricInfo>(rest))); break;
        case 1: check_fabric(provision::fabric_from(from_bytes<provision::nvml::GpuFabricInfoV2>(rest))); break;
        case 2: check_fabric(provision::fabric_from(from_bytes<provision::nvml::GpuFabricInfoV3>(rest))); break;
        case 3: check_fabric(provision::fabric_from(from_bytes<provision::nvml::GpuFabricInfoV4>(rest))); break;
        default: {
            const auto major = provision::imex_major_from_proc_devices(rest);
            if (!major) break;
            const auto heading = rest.find("Character devices:");
            FUZZ_CHECK(heading != std::string_view::npos);
            FUZZ_CHECK(rest.find(std::to_string(*major), heading) != std::string_view::npos);
            FUZZ_CHECK(rest.find(" nvidia-caps-imex-channels", heading) != std::string_view::npos);
        }
    }
}

}  // namespace fuzz::fabric_readers
