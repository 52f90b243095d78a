// Who is to blame when the proof across nodes does not pass, and how long it
// may take.  Pure functions over what the nodes reported through the
// rendezvous (network/rendezvous.h): no socket, no clock.
//
// The rule: a node whose own ranks did their part is never `failed`.  Only a
// node whose own GPU or NCCL returned an error carries the failure; a node
// whose ranks waited in vain (timed out) while another node vanished, went
// silent or failed has its all-reduce `not-measured`, and a finding names
// those nodes; where every node timed out together, nothing reached anyone:
// a finding about the network between the nodes, not about any GPU.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

// One node's part in the proof, as it reported it (the first four) or as
// node 0 found it (the last two).
enum class NodeProof : int {
    passed,        // its ranks all-reduced and summed right
    failed,        // its GPU or NCCL returned an error, or the sum was wrong
    timed_out,     // its ranks were still waiting at the limit (a peer that never came, a network that drops)
    not_measured,  // it had no rank to offer (no GPU, a busy GPU), or stopped because another node was lost
    vanished,      // its connection closed before it reported (killed, evicted, crashed)
    silent,        // connected, but no report by node 0's limit
};
std::string_view to_string(NodeProof proof);
std::optional<NodeProof> parse_node_proof(std::string_view text);

struct NodeResult {
    int node = 0;
    NodeProof proof = NodeProof::not_measured;
    std::string detail{};  // NCCL's own error, or why not measured
};

constexpr std::size_t kNodeProofs = 6;

// The job's outcome as node 0 gathered it.
struct JobOutcome {
    int nodes = 0;                               // nodes in the proof
    std::array<int, kNodeProofs> counts{};       // nodes by NodeProof, this one included
    std::vector<NodeResult> others;              // other nodes that did not pass (the culprits first), bounded
    bool heard = true;                           // false: node 0's outcome never came (`others` holds node 0)

    int count(NodeProof proof) const { return counts[static_cast<std::size_t>(proof)]; }
    // Nodes that vanished, went silent or failed: the proof cannot pass with them.
    int culprits() const;
};

// Culprits first (failed, vanished, silent), then by node rank.
bool named_before(const NodeResult& a, const NodeResult& b);

// This node's own all-reduce after the job's outcome: what the report says.
enum class ProofBlame {
    no_part,          // this node had no rank to offer, and no other node was lost
    passed,           // every rank of the job did its part
    own_failure,      // this node's GPU or NCCL failed: nccl_all_reduce_failed
    nodes_lost,       // other nodes vanished, went silent or failed: not measured here, nodes_lost
    network_timeout,  // every node timed out together: not measured, nodes_unreachable
};

struct ProofVerdict {
    ProofBlame blame = ProofBlame::passed;
    std::vector<NodeResult> lost;  // the nodes to name (nodes_lost)
    int lost_count = 0;            // all of them
};

// The rule above, from this node's own result and the job's outcome.
ProofVerdict judge_proof(const NodeResult& own, const JobOutcome& job);

// How long NCCL's communicator across `nodes` nodes and the all-reduce of
// `bytes` (`repeats` + 1 runs) may take over `transport` (a floor of
// bandwidth a working link of that kind gives): documented in docs/DESIGN.md,
// "The proof across nodes".
enum class ProofTransport { socket, rdma };
std::chrono::milliseconds proof_limit(int nodes, int ranks, std::size_t bytes, int repeats, ProofTransport transport);

}  // namespace provision::network
