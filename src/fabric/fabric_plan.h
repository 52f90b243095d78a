// Before the checks: whether the visible GPUs sit in a multi-node NVLink
// domain, and whether the workload's NCCL would check it at init, by NCCL's
// own rule (NVIDIA/nccl src/mnnvl.cc, ncclMnnvlCheck): cuMem on, every GPU's
// fabric state COMPLETED with a non-zero cluster UUID (NCCL_MNNVL_UUID and
// NCCL_MNNVL_CLIQUE_ID replace NVML's), NCCL_MNNVL_ENABLE not 0, and a
// clique of two GPUs or more: two of this node, or any of a job over several
// nodes (the rest of the clique is on the other nodes).  Pure.
#pragma once

#include "fabric/fabric_report.h"
#include "gpu/inventory.h"
#include "nccl/nccl_paths.h"

namespace provision {

FabricReport plan_fabric(const Inventory& inventory, const NcclPaths& paths, bool nccl_installed,
                         const MnnvlSettings& settings, int job_nodes);

}  // namespace provision
