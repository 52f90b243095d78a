// NVML's fabric info structs (nvml_api.h: v1 to v4) read into a GpuFabric,
// and the healthMask's fields named.  Pure: the bytes come from the driver
// (nvml_topology.cpp), a fake NVML or a fuzzer, and any bytes give a value
// or nullopt, never more than the struct holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "gpu/nvml_api.h"

namespace provision {

// nullopt where the state is none NVML defines (a layout this build misreads).
std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfo& info);
std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV2& info);
std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV3& info);
std::optional<GpuFabric> fabric_from(const nvml::GpuFabricInfoV4& info);

// The cluster UUID as 32 hex digits; "" when all sixteen bytes are zero.
std::string cluster_uuid_text(const unsigned char (&uuid)[16]);

// What a healthMask says is wrong, in words ("bandwidth degraded", "route
// unhealthy", ...): each field is two bits (NVML_GPU_FABRIC_HEALTH_MASK_*:
// 0 not supported, 1 true, 2 false), the configuration four (1: none), so
// 0xaa is healthy (NVIDIA/nccl#2186 read it as a plain bit mask).  Empty:
// nothing wrong, or nothing the driver says.
std::vector<std::string> fabric_health_problems(unsigned health_mask);

}  // namespace provision
