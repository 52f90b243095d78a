// The network stage in the pipeline: whether it runs (a job over several
// nodes; or the node's labels and metrics, for the RDMA and GPUDirect facts
// alone), what it is told (NCCL's variables as the workload gets them, the
// roots test builds replace), and where its results go in the report.  On
// one node without labels or metrics it starts nothing and reads nothing.
#pragma once

#include <future>
#include <memory>
#include <optional>

#include "app/job_meeting.h"
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
    // the other nodes' before the all-reduce across them and hear the job's
    // outcome after it (app/job_meeting.h, at MASTER_ADDR and
    // --rendezvous-port); nullptr otherwise, and for provision run by
    // torchrun in a worker other than LOCAL_RANK 0 (one provision a node
    // meets the others).  Kept for judge_meeting.
    NodeMeeting* meeting(const Options& options, Report& report);
    // The meeting's outcome in the report (network.rendezvous, network.proof),
    // with its findings.
    void judge_meeting(Report& report, const HealthPolicy& policy) const;

private:
    network::JobShape job_;
    std::unique_ptr<JobMeeting> meeting_;
    network::ProofTransport transport_ = network::ProofTransport::socket;
    std::optional<network::NetworkSettings> settings_;
    std::future<network::NetworkReport> reading_;
};

// The stage's settings for these options, or nullopt where it does not run.
std::optional<network::NetworkSettings> network_settings(const Options& options, const network::JobShape& job);

}  // namespace provision
