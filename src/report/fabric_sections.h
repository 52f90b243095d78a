// The multi-node NVLink stage in the report: the JSON "fabric" object, each
// GPU's fabric fields, the summary's "Fabric:" line and --explain's lines.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "fabric/fabric_report.h"
#include "gpu/inventory.h"

namespace provision {

toml::table fabric_table(const FabricReport& fabric);
// A GPU's "fabric": NVML's state, status and, where read, cluster, clique and health.
toml::table gpu_fabric_table(const GpuFabric& fabric);
// "" where the stage did not run.
std::string fabric_line(const FabricReport& fabric);
std::string explain_fabric(const FabricReport& fabric);

}  // namespace provision
