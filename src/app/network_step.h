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
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/timings.h"

namespace provision {

class NetworkStep {
public:
    // Decides from the options, and starts reading at once where it runs.
    explicit NetworkStep(const Options& options);

    // Sets the report's job, and where the stage ran its network: the GPUs
    // against the NICs, findings and notes; marks the phase "network".
    void finish(Report& report, const HealthPolicy& policy, PhaseClock& clock);

private:
    network::JobShape job_;
    std::optional<network::NetworkSettings> settings_;
    std::future<network::NetworkReport> reading_;
};

// The stage's settings for these options, or nullopt where it does not run.
std::optional<network::NetworkSettings> network_settings(const Options& options, const network::JobShape& job);

}  // namespace provision
