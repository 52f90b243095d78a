// This node's side of the proof across nodes, as the validation meets it
// (validate/validation.h, NodeMeeting): provision's rendezvous
// (network/rendezvous.h) kept open through the proof, the proof's own limit,
// and the job's outcome judged for this node (network/job_proof.h).  Its
// judge() puts the meeting, the proof and their findings in the report.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "network/job_proof.h"
#include "network/rendezvous.h"
#include "recipe/recipe.h"
#include "report/report.h"
#include "validate/validation.h"

namespace provision {

class JobMeeting final : public NodeMeeting {
public:
    // `refusal`: why this node cannot meet the others at all ("" when it
    // can); `proof_timeout`: the user's limit for the proof, else the model's.
    JobMeeting(network::RendezvousConfig config, std::string refusal,
               std::optional<std::chrono::milliseconds> proof_timeout, network::ProofTransport transport);

    std::optional<JobRanks> meet(int local_ranks, const MakeNcclId& make_id, std::string& why) override;
    std::chrono::milliseconds proof_limit(int ranks, std::size_t bytes, int repeats) const override;
    std::optional<std::string> lost() override;
    void settle(NcclAllReduceResult& own) override;

    // network.rendezvous and network.proof in the report, with their findings.
    void judge(Report& report, const HealthPolicy& policy) const;

private:
    network::RendezvousConfig config_;
    std::string refusal_;
    std::optional<std::chrono::milliseconds> proof_timeout_;
    network::ProofTransport transport_;
    std::unique_ptr<network::Meeting> meeting_;
    std::optional<network::RendezvousOutcome> met_;
    mutable std::chrono::milliseconds limit_{0};
    std::optional<network::NodeResult> own_;
    std::optional<network::JobOutcome> job_;
    std::optional<network::ProofVerdict> verdict_;
    double measured_gb_per_s_ = 0;
};

}  // namespace provision
