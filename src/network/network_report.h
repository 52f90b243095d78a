// What the network stage read and decided: the report's "network" (docs/
// DESIGN.md, "Between nodes"), its findings and the one setting it may
// write.  Plain values; network_stage.h fills it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "health/findings.h"
#include "network/dma_buf_probe.h"
#include "network/gpudirect.h"
#include "network/job_proof.h"
#include "network/interfaces.h"
#include "network/pci_topology.h"
#include "network/rdma_devices.h"
#include "network/rendezvous.h"
#include "network/route.h"
#include "network/socket_interfaces.h"
#include "workload_env/env_settings.h"

namespace provision::network {

// Why the stage ran: a job over several nodes (every check, findings), or
// a node's labels and metrics on one node (the RDMA and GPUDirect facts
// alone: nothing about a job, no findings).
enum class NetworkScope { job, node_facts };

// The transport NCCL's network plugin would take between nodes.
enum class Transport { ib, socket };
std::string_view to_string(Transport transport);

struct InterfaceReport {
    std::string name;
    bool running = false;
    bool loopback = false;
    std::vector<std::string> addresses;  // "10.0.0.5/24"
    InterfaceState state;
};

// One GPU against its nearest NIC.
enum class GpuDirectState { on, too_far, unsupported, no_nic, unknown };
std::string_view to_string(GpuDirectState state);

struct GpuDirectGpu {
    int gpu = 0;
    std::string nic;                       // the nearest RDMA device NCCL takes; "" none
    std::optional<PathType> path;          // NCCL's path type to it
    GpuDirectState state = GpuDirectState::unknown;
    std::vector<std::string> acs_redirect;  // bridges between them with ACS redirection on
    std::vector<std::string> acs_unknown;   // bridges whose ACS could not be read
};

enum class DmaBuf { supported, unsupported, unknown };
std::string_view to_string(DmaBuf state);

struct GpuDirectReport {
    PeerMemory peer_memory = PeerMemory::none;
    DmaBuf dma_buf = DmaBuf::unknown;
    std::string dma_buf_why;
    DmaBufFacts dma_buf_facts;
    DmaBufProbe probe;
    PathType level = PathType::p2c;
    bool topology_file = false;            // NCCL_TOPO_FILE: NCCL reads its paths from there, not sysfs
    std::vector<GpuDirectGpu> gpus;
};

// A port NCCL's IB transport takes (net_ib/init.cc ncclIbInitDevices).
struct TakenPort {
    std::size_t device = 0;  // index into rdma.devices
    std::size_t port = 0;    // index into its ports
};

// --validate=full across nodes, once the nodes met: this node's part, the
// job's outcome by node rank, and the figure the transport should give.
struct ProofAcrossNodes {
    std::chrono::milliseconds limit{0};      // the communicator's and all-reduce's
    NodeProof own = NodeProof::not_measured;
    std::string own_detail;
    ProofBlame blame = ProofBlame::no_part;
    int nodes = 0;                           // nodes in the proof
    int passed = 0;                          // of them, whose ranks passed
    bool heard = true;                       // node 0's outcome came
    std::vector<NodeResult> lost;            // nodes lost (named, bounded)
    int lost_count = 0;
    std::optional<double> expected_gb_per_s;  // the transport's figure
    std::string expected_from;
};

struct NetworkReport {
    NetworkScope scope = NetworkScope::job;
    std::vector<InterfaceReport> interfaces;  // those NCCL takes and the route's
    InterfaceList interface_list;             // everything getifaddrs gave (for findings; not reported whole)
    SocketChoice socket;
    std::optional<RouteToMaster> route;       // where MASTER_ADDR is known
    Transport transport = Transport::socket;
    std::string transport_why;
    bool ibverbs_missing = false;             // RDMA ports, but no libibverbs in the image for NCCL to open
    RdmaReading rdma;
    std::vector<TakenPort> taken;
    GpuDirectReport gpudirect;
    std::vector<Finding> findings;
    std::vector<std::pair<std::string, std::string>> write;  // NCCL_SOCKET_IFNAME, with its reason in a finding
    std::vector<KeptVariable> kept;
    std::vector<std::string> notes;
    // --validate=full: how provision's rendezvous before the proof across
    // nodes ended (its id left out).
    std::optional<RendezvousOutcome> rendezvous{};
    std::optional<ProofAcrossNodes> proof{};
};

// Writes the stage's settings into the workload's (the user's values stay).
void add_network_settings(const NetworkReport& network, EnvSettings& env);

}  // namespace provision::network
