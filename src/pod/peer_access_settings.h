// What NCCL (and the workload's launcher) is told about peer-to-peer paths
// that do not work, from the recipes' [pod.p2p_settings] and the workload's
// own p2p_settings:
//   no broken pair                                  nothing
//   broken pairs all joined by PCIe, and NVLink
//   pairs exist and pass                            env_pcie_broken (NCCL_P2P_LEVEL=NVL)
//   otherwise (NVLink pairs broken too, or none)    env_broken (NCCL_P2P_DISABLE=1)
// A settings table is one decision: where the user set any of its variables,
// it is the user's (workload_env/user_values.h), and the plan says so.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "workload_env/user_values.h"
#include "pod/link_judgement.h"
#include "recipe/pod_recipe.h"

namespace provision {

enum class PeerAccessState { works, pcie_broken, broken };

PeerAccessState peer_access_state(const std::vector<LinkReport>& links);

struct PeerAccessPlan {
    PeerAccessState state = PeerAccessState::works;
    std::vector<UserDecision> settings;  // the recipes' values, written or the user's kept
    std::string why;                     // for the summary; empty when nothing is wrong
};

// `draining`: the GPUs whose driver asks for peer traffic to stop
// (recovery action drain-p2p): then, as where a pair was measured broken,
// env_broken (NCCL_P2P_DISABLE=1), with that reason.
PeerAccessPlan plan_peer_access_settings(const std::vector<LinkReport>& links,
                                         const std::vector<const PeerAccessSettings*>& tables,
                                         const UserValues& users, const std::vector<int>& draining = {});

}  // namespace provision
