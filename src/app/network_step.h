// The network stage in the pipeline: whether it runs (a job over several
// nodes; or the node's labels and metrics, for the RDMA and GPUDirect facts
// alone), what it is told (NCCL's variables as the workload gets them, the
// roots test builds replace), and where its results go in the report.  On
// one node without labels or metrics it starts nothing and reads nothing.
#pragma once

#include <future>
#include <optional>

#include "app/options.h"
#include "network/network_stage.h"
#include "network/rendezvous.h"
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/timings.h"
#include "validate/validation.h"

namespace provision {

class NetworkStep {
public:
    // Decides from the options, and starts reading at once where it runs.
    explicit NetworkStep(const Options& options);

    // Sets the report's job, and where the stage ran its network: the GPUs
    // against the NICs, findings and notes; marks the phase "network".
    void finish(Report& report, const HealthPolicy& policy, PhaseClock& clock);

    // --validate=full on a job over several nodes: how this node's ranks meet
    // the other nodes' before the all-reduce across them (network/rendezvous.h,
    // at MASTER_ADDR and --rendezvous-port); empty otherwise.  Its outcome is
    // kept for judge_meeting.
    MeetNodes meeting(const Options& options);
    // The meeting's outcome in the report (network.rendezvous), with its
    // finding where the nodes did not all come.
    void judge_meeting(Report& report, const HealthPolicy& policy) const;

private:
    network::JobShape job_;
    std::optional<network::RendezvousConfig> meeting_;
    std::optional<network::RendezvousOutcome> met_;
    std::optional<network::NetworkSettings> settings_;
    std::future<network::NetworkReport> reading_;
};

// The stage's settings for these options, or nullopt where it does not run.
std::optional<network::NetworkSettings> network_settings(const Options& options, const network::JobShape& job);

}  // namespace provision
