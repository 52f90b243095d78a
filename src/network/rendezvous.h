// The meeting of every node's provision before the proof across nodes:
// node rank 0 listens on a port of provision's own (kRendezvousPort by
// default, never the job's MASTER_PORT, which torchrun's store takes) on
// every address of MASTER_ADDR's family; every other node connects to
// MASTER_ADDR there, says who it is, and waits.  Once every node has come,
// node 0 hands each the NCCL unique id its first GPU worker made, the
// number of ranks in all and the node's first global rank (nodes in order
// of node rank, each with as many ranks as it has GPUs).  Nothing waits
// past the time limit: node 0 then tells those that came which node ranks
// are missing, and a node that cannot reach node 0 says node 0 is missing.
//
// The protocol, one line each way (at most kMostLineBytes):
//   node -> 0   "provision-rendezvous 1 JOB NODES NODE_RANK LOCAL_RANKS\n"
//   0 -> node   "ok ID RANKS FIRST_RANK\n" | "missing R,R,...\n" |
//               "refused WHY\n" | "failed WHY\n"
// JOB is a key both sides make from the job's own variables, so that two
// jobs that happen to share MASTER_ADDR and the port never mix.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "health/findings.h"
#include "recipe/recipe.h"

namespace provision::network {

constexpr std::uint16_t kRendezvousPort = 29519;
constexpr std::size_t kMostLineBytes = 1024;

struct RendezvousConfig {
    std::string master_addr;       // numeric, or a host name resolved within the limit
    std::uint16_t port = kRendezvousPort;
    int nodes = 1;
    int node_rank = 0;
    int local_ranks = 1;           // this node's GPUs in the communicator
    std::string job_key;           // rendezvous_job_key
    std::chrono::milliseconds limit{300000};
};

enum class RendezvousStatus {
    joined,       // every node came: id, ranks and first_rank are set
    missing,      // the limit passed with node ranks missing (node 0's word, or node 0 itself)
    refused,      // node 0 answered, but not for this node (another job, a rank taken twice)
    failed,       // node 0 could not make the id, or this node could not listen or talk
};
std::string_view to_string(RendezvousStatus status);

struct RendezvousOutcome {
    RendezvousStatus status = RendezvousStatus::failed;
    std::string id;               // NCCL's unique id as node 0's worker wrote it
    int ranks = 0;                // ranks in all
    int first_rank = 0;           // this node's first global rank
    std::vector<int> missing;     // node ranks that had not come within the limit
    std::string detail;
};

// Node 0's id: the NCCL unique id of its first GPU worker, or nullopt with why.
using MakeId = std::function<std::optional<std::string>(std::string& why)>;

// Runs this node's side: node rank 0 serves (and calls make_id once every
// node has come), every other node joins.  Never longer than config.limit
// (plus the time make_id takes on node 0).
RendezvousOutcome rendezvous(const RendezvousConfig& config, const MakeId& make_id);

// A key from the launcher's variables that every node of one job shares
// (MASTER_ADDR, MASTER_PORT, the node count, the launcher's job id).
std::string rendezvous_job_key(std::string_view master_addr, std::string_view master_port, int nodes,
                               std::string_view job_id);

// The finding a wait that did not end with every node gives (nodes_missing,
// or nothing when every node came).
std::optional<Finding> rendezvous_finding(const RendezvousOutcome& outcome, const RendezvousConfig& config,
                                          const HealthPolicy& policy);

}  // namespace provision::network
