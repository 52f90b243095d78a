// NCCL's multi-node NVLink variables as NCCL reads them (NVIDIA/nccl
// src/mnnvl.cc; every NCCL_PARAM: strtoll with base 0, unset or empty the
// default): NCCL_MNNVL_ENABLE 0 off, 1 on (an error where unavailable), 2
// auto (the default); NCCL_MNNVL_UUID and NCCL_MNNVL_CLIQUE_ID replace what
// NVML says (-1: NVML's; the clique id -2: a hash of the rack's serial, 2.28).
#pragma once

#include <optional>
#include <string>

namespace provision {

struct MnnvlSettings {
    long long enable = 2;
    bool enable_set = false;             // the user set NCCL_MNNVL_ENABLE
    std::optional<long long> uuid;       // set and not -1
    std::optional<long long> clique_id;  // set and not -1

    bool off() const { return enable == 0; }
};

MnnvlSettings mnnvl_settings(const std::optional<std::string>& enable, const std::optional<std::string>& uuid,
                             const std::optional<std::string>& clique_id);

}  // namespace provision
