// The meeting of every node's provision around the proof across nodes.
// Node rank 0 listens on a port of provision's own (kRendezvousPort by
// default, never the job's MASTER_PORT, which torchrun's store takes) on
// every address; every other node connects to MASTER_ADDR there, says who it
// is, and waits.  The connections stay open through the proof: once every
// node has come, node 0 hands each the NCCL unique id its first GPU worker
// made, the ranks in all and the node's first global rank; after the
// all-reduce each node reports its own ranks' outcome, and node 0 answers
// every node with the job's.  So a node that vanishes (its connection
// closes) or fails is known to every other node by its node rank, and no
// healthy node takes the blame (network/job_proof.h decides it).
//
// The protocol, one line each way at a time (at most kMostLineBytes):
//   node -> 0   "provision-rendezvous 2 JOB NODES NODE_RANK LOCAL_RANKS NONCE"
//   0 -> node   with a token: "challenge NONCE0 PROOF0", then
//   node -> 0   "proof PROOF" ("proof -" without a token)
//   0 -> node   "wait MS"  (counted: node 0 answers within MS, by its own limit)
//   0 -> node   "ok ID RANKS FIRST_RANK" | "missing COUNT RANGES" |
//               "refused WHY" | "failed WHY"
// then, after "ok", through the proof:
//   0 -> node   "gone NODE STATE WHY"     (at once, when a node vanished or failed)
//   node -> 0   "report STATE WHY"        (its own ranks' outcome)
//   0 -> node   "node NODE STATE WHY"...  (at most kMostNamedNodes nodes that did not pass)
//               "outcome NODES PASSED NOT_PASSED"
// JOB is a key both sides make from the job's own variables, so that two
// jobs that happen to share MASTER_ADDR and the port never mix.  NONCE and
// NONCE0 are fresh random numbers; PROOF0 and PROOF are HMACs of the token
// over the other side's nonce (network/rendezvous_token.h): with a token on
// node 0, a node that cannot prove it holds it is refused before it learns
// anything; a node with a token trusts no node 0 that cannot prove it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "network/job_proof.h"
#include "network/rendezvous_token.h"
#include "network/wire.h"

namespace provision::network {

constexpr std::uint16_t kRendezvousPort = 29519;
// The most node ranks a message or a finding names one by one.
constexpr std::size_t kMostNamedNodes = 16;

struct RendezvousConfig {
    std::string master_addr;       // numeric, or a host name resolved again and again within the limit
    std::uint16_t port = kRendezvousPort;
    int nodes = 1;                 // the job's nodes (an elastic job's most)
    int min_nodes = 1;             // an elastic job's fewest (PET_NNODES=MIN:MAX); else `nodes`
    int node_rank = 0;
    int local_ranks = 1;           // this node's GPUs in the communicator; 0: none to offer
    std::string job_key;           // rendezvous_job_key
    std::chrono::milliseconds limit{300000};
    std::optional<RendezvousToken> token;
};

enum class RendezvousStatus {
    joined,       // enough nodes came: id, ranks and first_rank are set
    missing,      // the limit passed with node ranks missing (node 0's word, or node 0 itself)
    refused,      // node 0 answered, but not for this node (another job, a rank taken twice, no token)
    failed,       // node 0 could not make the id, or this node could not listen or talk
};
std::string_view to_string(RendezvousStatus status);

struct RendezvousOutcome {
    RendezvousStatus status = RendezvousStatus::failed;
    std::string id;               // NCCL's unique id as node 0's worker wrote it
    int ranks = 0;                // ranks in all
    int first_rank = 0;           // this node's first global rank
    int nodes = 0;                // the nodes whose ranks take part
    std::vector<int> missing;     // node ranks that had not come within the limit (the first kMostNamedNodes)
    int missing_count = 0;        // all of them
    std::string detail;
    std::string file_limit;       // node 0: why it may not hold a connection for every node ("" when it may)
};

// Node 0's id: the NCCL unique id of its first GPU worker, or nullopt with why.
using MakeId = std::function<std::optional<std::string>(std::string& why)>;

// One node's side of the meeting, from the rendezvous to the job's outcome.
class Meeting {
public:
    explicit Meeting(RendezvousConfig config);
    ~Meeting();
    Meeting(const Meeting&) = delete;
    Meeting& operator=(const Meeting&) = delete;

    // Node rank 0 serves (and calls make_id once enough nodes have come);
    // every other node joins.  Never longer than the limit (plus the time
    // make_id takes on node 0, and a node's grace for node 0's answer).
    RendezvousOutcome meet(const MakeId& make_id);

    // During the proof, without waiting: what the other side has said.
    // A node that vanished or failed makes the job's proof unable to end
    // well: then `lost` names it (node 0 tells the other nodes at once).
    std::optional<NodeResult> lost();

    // After this node's own part: reports it, and waits (at most `limit`
    // plus a grace) for the job's outcome by node rank.
    JobOutcome settle(const NodeResult& own, std::chrono::milliseconds limit);

    const RendezvousConfig& config() const { return config_; }

private:
    struct Peer;
    RendezvousOutcome serve(const MakeId& make_id);
    RendezvousOutcome join();
    JobOutcome gather(const NodeResult& own, Clock::time_point deadline);
    JobOutcome hear_outcome(Clock::time_point deadline);
    void read_peers();

    RendezvousConfig config_;
    std::vector<std::unique_ptr<Peer>> peers_;  // node 0: the nodes in the proof, by node rank
    std::unique_ptr<Peer> node_zero_;           // every other node: its connection to node 0
    std::vector<NodeResult> gone_;              // what node 0 said was lost, or node 0 itself
    bool joined_ = false;
};

// A key from the launcher's variables that every node of one job shares
// (MASTER_ADDR, MASTER_PORT, the node count, the launcher's job id).
std::string rendezvous_job_key(std::string_view master_addr, std::string_view master_port, int nodes,
                               std::string_view job_id);

}  // namespace provision::network
