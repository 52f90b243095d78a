// After the checks: the multi-node NVLink stage's findings (recipe/
// health_signals.h fabric_signals) and settings.
//   fabric_unhealthy      a GPU's fabric health (healthSummary, healthMask) is not healthy
//   imex_channel_missing  the fabric is multi-node NVLink, but no IMEX channel here opens
//   mnnvl_handle_failed   the workers' fabric-handle check failed: NCCL would stop the
//                         job at init, so NCCL_MNNVL_ENABLE=0 is written (unless the user
//                         set it): the job runs over the other transports
//   nccl_known_defect     the workload's NCCL and its clique match a [[pod.nccl_defects]]
//                         row; its workaround is written only with --apply-workarounds
// A variable the user set keeps its value, and the finding says so.
#pragma once

#include <optional>

#include "fabric/fabric_report.h"
#include "gpu/inventory.h"
#include "nccl/nccl_library.h"
#include "recipe/pod_recipe.h"
#include "recipe/recipe.h"
#include "workload_env/env_settings.h"

namespace provision {

void judge_fabric(FabricReport& report, const Inventory& inventory, const std::optional<NcclLibrary>& nccl,
                  const std::vector<FabricHandleCheck>& handles, const PodRecipe& recipe, const HealthPolicy& policy,
                  const UserValues& users, bool apply_workarounds);

// Writes the stage's settings into the workload's (the user's values stay).
void add_fabric_settings(const FabricReport& report, EnvSettings& env);

}  // namespace provision
