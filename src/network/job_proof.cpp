#include "network/job_proof.h"

#include <algorithm>
#include <cmath>

namespace provision::network {
namespace {

bool is_culprit(NodeProof proof) {
    return proof == NodeProof::failed || proof == NodeProof::vanished || proof == NodeProof::silent;
}

// The culprits among the other nodes (named ones, and how many in all).
ProofVerdict lost(const JobOutcome& job, ProofBlame blame) {
    ProofVerdict verdict;
    verdict.blame = blame;
    for (const NodeResult& node : job.others)
        if (is_culprit(node.proof)) verdict.lost.push_back(node);
    verdict.lost_count = job.heard ? job.culprits() : static_cast<int>(verdict.lost.size());
    return verdict;
}

}  // namespace

std::string_view to_string(NodeProof proof) {
    switch (proof) {
        case NodeProof::passed: return "passed";
        case NodeProof::failed: return "failed";
        case NodeProof::timed_out: return "timed-out";
        case NodeProof::not_measured: return "not-measured";
        case NodeProof::vanished: return "vanished";
        case NodeProof::silent: break;
    }
    return "silent";
}

std::optional<NodeProof> parse_node_proof(std::string_view text) {
    for (const NodeProof proof : {NodeProof::passed, NodeProof::failed, NodeProof::timed_out, NodeProof::not_measured,
                                  NodeProof::vanished, NodeProof::silent})
        if (text == to_string(proof)) return proof;
    return std::nullopt;
}

int JobOutcome::culprits() const {
    return count(NodeProof::failed) + count(NodeProof::vanished) + count(NodeProof::silent);
}

bool named_before(const NodeResult& a, const NodeResult& b) {
    const bool a_first = is_culprit(a.proof), b_first = is_culprit(b.proof);
    if (a_first != b_first) return a_first;
    return a.node < b.node;
}

ProofVerdict judge_proof(const NodeResult& own, const JobOutcome& job) {
    // Another node's loss, this node's own failure aside, is what the job
    // heard; node 0 that never answered is such a loss too.
    const int others_lost = job.heard ? job.culprits() - (own.proof == NodeProof::failed ? 1 : 0)
                                      : static_cast<int>(job.others.size());
    const bool others_gone =
        !job.heard || job.count(NodeProof::vanished) > 0 || job.count(NodeProof::silent) > 0;
    switch (own.proof) {
        case NodeProof::passed: return {ProofBlame::passed, {}, 0};
        case NodeProof::failed:
            // NCCL here returns an error when a peer's socket closes: a node
            // that vanished is the cause, not this node's NCCL.
            return others_gone ? lost(job, ProofBlame::nodes_lost) : ProofVerdict{ProofBlame::own_failure, {}, 0};
        case NodeProof::timed_out:
            if (others_lost > 0) return lost(job, ProofBlame::nodes_lost);
            // Others finished while this node's ranks still waited: its own.
            if (job.count(NodeProof::passed) > 0) return {ProofBlame::own_failure, {}, 0};
            return {ProofBlame::network_timeout, {}, 0};
        case NodeProof::not_measured:
        case NodeProof::vanished:
        case NodeProof::silent: break;
    }
    if (others_lost > 0) return lost(job, ProofBlame::nodes_lost);
    return {ProofBlame::no_part, {}, 0};
}

std::chrono::milliseconds proof_limit(int nodes, int ranks, std::size_t bytes, int repeats, ProofTransport transport) {
    // NCCL's communicator: a fixed part (its topology search, the proxy
    // threads, loading the network plugin: 0.3-1 s on one node, measured),
    // then its bootstrap, a ring all-gather over sockets whose steps follow
    // one another: a generous 20 ms a rank.
    const double init_s = 10.0 + 0.020 * std::max(ranks, 1);
    // The all-reduce: each rank sends and receives 2 (n - 1) / n of the
    // buffer a run; the floor is the slowest link still worth running on
    // (1 GbE for sockets, 10 Gb/s for RDMA), in bytes a second.
    const double floor_bytes_per_s = transport == ProofTransport::rdma ? 1.25e9 : 1.25e8;
    const double n = std::max(nodes, 2);
    const double moved = 2.0 * (n - 1) / n * static_cast<double>(bytes) * (std::max(repeats, 0) + 1);
    const double seconds = init_s + moved / floor_bytes_per_s;
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

}  // namespace provision::network
