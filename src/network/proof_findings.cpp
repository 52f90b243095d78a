#include "network/proof_findings.h"

#include <fmt/format.h>

#include "core/text.h"

namespace provision::network {
namespace {

std::string node_list(const std::vector<NodeResult>& nodes, int in_all) {
    std::string text;
    for (const NodeResult& node : nodes)
        text += fmt::format("{}node {} {} ({})", text.empty() ? "" : "; ", node.node, to_string(node.proof),
                            printable(node.detail, 256));
    if (in_all > static_cast<int>(nodes.size()))
        text += fmt::format("; and {} more", in_all - static_cast<int>(nodes.size()));
    return text;
}

std::string transport_words(const NetworkReport* network) {
    if (!network) return "NCCL's network transport";
    if (network->transport == Transport::ib) return "NCCL's IB transport";
    const auto& chosen = network->socket.interfaces;
    return chosen.empty() ? std::string("NCCL's socket transport")
                          : fmt::format("NCCL's socket transport over {}", echoed(chosen.front().name));
}

}  // namespace

std::optional<ExpectedBandwidth> expected_bandwidth(const NetworkReport& network) {
    if (network.transport == Transport::ib && !network.taken.empty()) {
        double gbits = 0;
        int known = 0;
        for (const TakenPort& taken : network.taken) {
            if (taken.device >= network.rdma.devices.size()) continue;
            const RdmaDevice& device = network.rdma.devices[taken.device];
            if (taken.port >= device.ports.size() || !device.ports[taken.port].rate_gbps) continue;
            gbits += *device.ports[taken.port].rate_gbps;
            ++known;
        }
        if (known == 0) return std::nullopt;
        return ExpectedBandwidth{gbits / 8, fmt::format("{} RDMA port{} NCCL takes, {:g} Gb/s in all", known,
                                                        known == 1 ? "" : "s", gbits)};
    }
    if (network.socket.interfaces.empty()) return std::nullopt;
    const std::string& name = network.socket.interfaces.front().name;
    for (const InterfaceReport& interface : network.interfaces) {
        if (interface.name != name || !interface.state.speed_mbps || *interface.state.speed_mbps <= 0) continue;
        const double mbits = static_cast<double>(*interface.state.speed_mbps);
        return ExpectedBandwidth{mbits / 8000, fmt::format("{} at {:g} Mb/s", echoed(name), mbits)};
    }
    return std::nullopt;
}

std::optional<Finding> rendezvous_finding(const RendezvousOutcome& outcome, const RendezvousConfig& config,
                                          const HealthPolicy& policy) {
    const double seconds = static_cast<double>(config.limit.count()) / 1000;
    switch (outcome.status) {
        case RendezvousStatus::joined: return std::nullopt;
        case RendezvousStatus::missing: {
            std::string named = fmt::format("{}", fmt::join(outcome.missing, ", "));
            if (outcome.missing_count > static_cast<int>(outcome.missing.size()))
                named += fmt::format(" and {} more", outcome.missing_count - static_cast<int>(outcome.missing.size()));
            return Finding{-1, -1, "nodes_missing", policy.level("nodes_missing"),
                           fmt::format("node rank{} {} of the job's {} nodes had not come to provision's rendezvous "
                                       "at MASTER_ADDR={} port {} within {:g} s ({}): the proof across nodes did not "
                                       "run; a node that never starts leaves NCCL's own start waiting too",
                                       outcome.missing_count == 1 ? "" : "s", named, config.nodes,
                                       echoed(config.master_addr), config.port, seconds, outcome.detail)};
        }
        case RendezvousStatus::refused:
        case RendezvousStatus::failed:
            return Finding{-1, -1, "rendezvous_failed", policy.level("rendezvous_failed"),
                           fmt::format("provision's rendezvous at MASTER_ADDR={} port {} did not bring the nodes "
                                       "together ({}: {}): the proof across nodes did not run",
                                       echoed(config.master_addr), config.port,
                                       to_string(outcome.status), outcome.detail)};
    }
    return std::nullopt;
}

std::optional<Finding> file_limit_finding(const RendezvousOutcome& outcome, const HealthPolicy& policy) {
    if (outcome.file_limit.empty()) return std::nullopt;
    return Finding{-1, -1, "open_files_limited", policy.level("open_files_limited"),
                   fmt::format("{}; raise the container's open-files limit (Docker: --ulimit nofile=65536; "
                               "Kubernetes: the container runtime's default)",
                               outcome.file_limit)};
}

std::optional<Finding> proof_finding(const ProofVerdict& verdict, const JobOutcome& job, const NetworkReport* network,
                                     std::chrono::milliseconds limit, const HealthPolicy& policy) {
    const double seconds = static_cast<double>(limit.count()) / 1000;
    switch (verdict.blame) {
        case ProofBlame::nodes_lost:
            return Finding{-1, -1, "nodes_lost", policy.level("nodes_lost"),
                           fmt::format("the proof across nodes did not complete because of other nodes, not this "
                                       "one: {}; this node's ranks did their part as far as they could, so its "
                                       "all-reduce is not measured; a job started now would meet the same nodes",
                                       node_list(verdict.lost, verdict.lost_count))};
        case ProofBlame::network_timeout:
            return Finding{-1, -1, "nodes_unreachable", policy.level("nodes_unreachable"),
                           fmt::format("every node's ranks ({} nodes) timed out together within {:g} s in NCCL's "
                                       "communicator or all-reduce across nodes: nothing reached anyone, which points "
                                       "at the network between the nodes ({}: a firewall, a route, an interface the "
                                       "other nodes cannot reach), not at any GPU",
                                       job.nodes, seconds, transport_words(network))};
        case ProofBlame::no_part:
        case ProofBlame::passed:
        case ProofBlame::own_failure: break;
    }
    return std::nullopt;
}

std::optional<Finding> bandwidth_finding(double measured_gb_per_s, const std::optional<ExpectedBandwidth>& expected,
                                         const HealthPolicy& policy) {
    if (!expected || expected->gb_per_s <= 0 || measured_gb_per_s <= 0) return std::nullopt;
    const double floor = expected->gb_per_s * static_cast<double>(policy.proof_bandwidth_min_percent) / 100;
    if (measured_gb_per_s >= floor) return std::nullopt;
    return Finding{-1, -1, "nccl_bandwidth_low", policy.level("nccl_bandwidth_low"),
                   fmt::format("the all-reduce across nodes reached {:.2f} GB/s of bus bandwidth, under {}% of the "
                               "{:.2f} GB/s the transport should give ({}): a job's collectives across nodes will be "
                               "that slow; NCCL_DEBUG=INFO shows which transport and interfaces NCCL took",
                               measured_gb_per_s, policy.proof_bandwidth_min_percent, expected->gb_per_s,
                               expected->from)};
}

}  // namespace provision::network
