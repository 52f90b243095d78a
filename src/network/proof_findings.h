// The findings of the proof across nodes (docs/DESIGN.md, "The proof across
// nodes"): the rendezvous that did not bring the nodes together
// (nodes_missing, rendezvous_failed), node 0 short of descriptors
// (open_files_limited), the nodes lost during the proof (nodes_lost), every
// node timed out together (nodes_unreachable), and a proof far below what
// the transport should give (nccl_bandwidth_low).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "health/findings.h"
#include "network/job_proof.h"
#include "network/network_report.h"
#include "network/rendezvous.h"
#include "recipe/recipe.h"

namespace provision::network {

// What the network report says the all-reduce across nodes should reach,
// in GB/s of bus bandwidth: the RDMA ports NCCL takes (their rates summed),
// else the socket interface's speed; nullopt where the kernel does not say.
struct ExpectedBandwidth {
    double gb_per_s = 0;
    std::string from;  // "2 RDMA ports at 400 Gb/s", "eth0 at 25000 Mb/s"
};
std::optional<ExpectedBandwidth> expected_bandwidth(const NetworkReport& network);

// The finding a meeting that did not bring the nodes together gives.
std::optional<Finding> rendezvous_finding(const RendezvousOutcome& outcome, const RendezvousConfig& config,
                                          const HealthPolicy& policy);

// node 0's short descriptor limit, where it is short.
std::optional<Finding> file_limit_finding(const RendezvousOutcome& outcome, const HealthPolicy& policy);

// What the job's outcome says of this node's all-reduce (nodes_lost,
// nodes_unreachable), naming the nodes and the transport.
std::optional<Finding> proof_finding(const ProofVerdict& verdict, const JobOutcome& job, const NetworkReport* network,
                                     std::chrono::milliseconds limit, const HealthPolicy& policy);

// A proof that passed far below the expected bandwidth (the policy's
// proof_bandwidth_min_percent of it).
std::optional<Finding> bandwidth_finding(double measured_gb_per_s, const std::optional<ExpectedBandwidth>& expected,
                                         const HealthPolicy& policy);

}  // namespace provision::network
