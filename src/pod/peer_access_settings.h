// What NCCL (and the workload's launcher) is told about peer-to-peer paths
// that do not work, from the recipes' [pod.p2p_settings] and the workload's
// own p2p_settings:
//   no broken pair                                  nothing
//   broken pairs all joined by PCIe, and NVLink
//   pairs exist and pass                            env_pcie_broken (NCCL_P2P_LEVEL=NVL)
//   otherwise (NVLink pairs broken too, or none)    env_broken (NCCL_P2P_DISABLE=1)
// A user's value is never replaced: where the environment sets any variable
// of a settings table, none of that table's variables is written, and the
// plan says so.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "workload_env/env_settings.h"
#include "pod/link_judgement.h"
#include "recipe/pod_recipe.h"

namespace provision {

enum class PeerAccessState { works, pcie_broken, broken };

PeerAccessState peer_access_state(const std::vector<LinkReport>& links);

struct PeerAccessPlan {
    PeerAccessState state = PeerAccessState::works;
    std::vector<std::pair<std::string, std::string>> write;  // the recipes' values to write
    std::vector<KeptVariable> kept;                          // the user's values that stay
    std::string why;                                         // for the summary; empty when nothing is wrong
};

PeerAccessPlan plan_peer_access_settings(const std::vector<LinkReport>& links,
                                         const std::vector<const PeerAccessSettings*>& tables,
                                         const std::map<std::string, std::string>& environment);

// Puts the plan's variables into `env`: the values to write, and the user's
// values kept (EnvSettings::keep, so the report says so).
void apply_peer_access_plan(const PeerAccessPlan& plan, EnvSettings& env);

}  // namespace provision
