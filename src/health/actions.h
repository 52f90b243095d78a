// Which action each finding's signal asks for: one row a signal, in one
// table (actions.cpp), filled in once with what the run measured, after
// every finding is in.  A signal added to recipe/health_signals.h needs its
// row here (tests/unit/health_actions_test.cpp fails without one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/action.h"
#include "health/findings.h"

namespace provision {

// What the run measured that an action's concrete words need.
struct ActionFacts {
    std::uint64_t shm_needed_bytes = 1ULL << 30;  // the recipes' floor for /dev/shm ([pod] shm_min_mib)
    std::vector<std::string> verbs_nodes;         // "uverbs0": the host's RDMA devices this container cannot open
    bool ibverbs_missing = false;                 // the devices are here, but no libibverbs in the image
    std::string torch_wheel;                      // "torch>=2.10 from https://download.pytorch.org/whl/cu130 (CUDA 13.0)"; "" none known
    std::string driver_cuda;                      // "13.0"; "" unknown
    std::string driver_version;                   // "580.159.04"; "" unknown
    std::string architectures;                    // the visible GPUs' capabilities for TORCH_CUDA_ARCH_LIST: "9.0;10.0"
    std::map<int, std::vector<int>> xids;         // per GPU index: the critical Xids its kernel log holds
};

// The row of a signal, unfilled; nullopt for a signal the table lacks.
struct ActionRow {
    std::string_view signal;
    Actor actor;
    FleetAction fleet;
    std::string_view what;        // with {gpu}, {smi}, {driver_cuda}, ... (actions.cpp)
    std::string_view docker;
    std::string_view kubernetes;
};
const ActionRow* action_row(std::string_view signal);

// One action a finding, in the findings' order.  A signal without a row
// gets Actor::none with FleetAction::unknown.
std::vector<Action> actions_for(const std::vector<Finding>& findings, const ActionFacts& facts);

// How far an action goes, for the strongest of several: REPLACE_VM,
// RUN_FIELDDIAG (the GPU leaves service), RESTART_BM, RESTART_VM,
// COMPONENT_RESET, RUN_DCGMEUD, CONTACT_SUPPORT, UNKNOWN, RESTART_APP, NONE.
int fleet_severity(FleetAction action);

// The NVSentinel action for a critical Xid (NVSentinel's xiderrorsmapping.csv).
FleetAction xid_fleet_action(int xid);

}  // namespace provision
