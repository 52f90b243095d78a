#include "app/job_meeting.h"

#include <fmt/format.h>

#include "network/proof_findings.h"

namespace provision {
namespace {

network::NodeProof proof_of(PeerCopyStatus status) {
    switch (status) {
        case PeerCopyStatus::passed: return network::NodeProof::passed;
        case PeerCopyStatus::timeout: return network::NodeProof::timed_out;
        case PeerCopyStatus::not_measured:
        case PeerCopyStatus::skipped: return network::NodeProof::not_measured;
        default: break;
    }
    return network::NodeProof::failed;  // an error, or a wrong sum
}

std::string named(const std::vector<network::NodeResult>& nodes, int in_all) {
    std::string text;
    for (const auto& node : nodes)
        text += fmt::format("{}node {} {}", text.empty() ? "" : ", ", node.node, to_string(node.proof));
    if (in_all > static_cast<int>(nodes.size())) text += fmt::format(" and {} more", in_all - static_cast<int>(nodes.size()));
    return text;
}

}  // namespace

JobMeeting::JobMeeting(network::RendezvousConfig config, std::string refusal,
                       std::optional<std::chrono::milliseconds> proof_timeout, network::ProofTransport transport)
    : config_(std::move(config)), refusal_(std::move(refusal)), proof_timeout_(proof_timeout), transport_(transport) {}

std::optional<JobRanks> JobMeeting::meet(int local_ranks, const MakeNcclId& make_id, std::string& why) {
    if (met_) {
        why = "this node has met the others already";
        return std::nullopt;
    }
    network::RendezvousOutcome outcome;
    if (!refusal_.empty()) {
        outcome.detail = refusal_;
    } else {
        network::RendezvousConfig config = config_;
        config.local_ranks = local_ranks;
        meeting_ = std::make_unique<network::Meeting>(std::move(config));
        outcome = meeting_->meet(make_id);
    }
    met_ = outcome;
    if (outcome.status != network::RendezvousStatus::joined) {
        why = fmt::format("the nodes did not meet ({}: {})", to_string(outcome.status), outcome.detail);
        return std::nullopt;
    }
    return JobRanks{outcome.id, outcome.ranks, outcome.first_rank, outcome.nodes > 0 ? outcome.nodes : config_.nodes};
}

std::chrono::milliseconds JobMeeting::proof_limit(int ranks, std::size_t bytes, int repeats) const {
    limit_ = proof_timeout_ ? *proof_timeout_ : network::proof_limit(config_.nodes, ranks, bytes, repeats, transport_);
    return limit_;
}

std::optional<std::string> JobMeeting::lost() {
    if (!meeting_) return std::nullopt;
    const auto gone = meeting_->lost();
    if (!gone) return std::nullopt;
    return fmt::format("node {} {} ({})", gone->node, to_string(gone->proof), gone->detail);
}

void JobMeeting::settle(NcclAllReduceResult& own) {
    if (!meeting_ || own_ || !met_ || met_->status != network::RendezvousStatus::joined) return;
    own_ = network::NodeResult{config_.node_rank, proof_of(own.status), own.detail};
    job_ = meeting_->settle(*own_, limit_.count() > 0 ? limit_ : proof_limit(own.ranks, 0, 0));
    verdict_ = network::judge_proof(*own_, *job_);
    if (own.status == PeerCopyStatus::passed) measured_gb_per_s_ = own.bus_gb_per_s;
    switch (verdict_->blame) {
        case network::ProofBlame::nodes_lost:
            own.status = PeerCopyStatus::not_measured;
            own.detail = fmt::format("other nodes were lost during the proof ({}); this node's ranks: {}",
                                     named(verdict_->lost, verdict_->lost_count), own.detail);
            break;
        case network::ProofBlame::network_timeout:
            own.status = PeerCopyStatus::not_measured;
            own.detail = fmt::format("every node's ranks timed out together: the network between the nodes; this "
                                     "node's ranks: {}",
                                     own.detail);
            break;
        case network::ProofBlame::no_part:
        case network::ProofBlame::passed:
        case network::ProofBlame::own_failure: break;
    }
}

void JobMeeting::judge(Report& report, const HealthPolicy& policy) const {
    if (!met_) return;
    network::NetworkReport* network = report.network ? &*report.network : nullptr;
    if (network) {
        network::RendezvousOutcome kept = *met_;
        kept.id.clear();  // the communicator's, of no use after it
        network->rendezvous = kept;
    }
    if (auto finding = network::rendezvous_finding(*met_, config_, policy)) report.findings.push_back(*finding);
    if (auto finding = network::file_limit_finding(*met_, policy)) report.findings.push_back(*finding);
    if (!own_ || !job_ || !verdict_) return;
    const auto expected = network ? network::expected_bandwidth(*network) : std::nullopt;
    if (network) {
        network::ProofAcrossNodes proof;
        proof.limit = limit_;
        proof.own = own_->proof;
        proof.own_detail = own_->detail;
        proof.blame = verdict_->blame;
        proof.nodes = job_->nodes;
        proof.passed = job_->count(network::NodeProof::passed);
        proof.heard = job_->heard;
        proof.lost = verdict_->lost;
        proof.lost_count = verdict_->lost_count;
        if (expected) {
            proof.expected_gb_per_s = expected->gb_per_s;
            proof.expected_from = expected->from;
        }
        network->proof = std::move(proof);
    }
    if (auto finding = network::proof_finding(*verdict_, *job_, network, limit_, policy))
        report.findings.push_back(*finding);
    if (verdict_->blame == network::ProofBlame::passed)
        if (auto finding = network::bandwidth_finding(measured_gb_per_s_, expected, policy))
            report.findings.push_back(*finding);
}

}  // namespace provision
