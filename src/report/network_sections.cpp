#include "report/network_sections.h"

#include <cmath>

#include <fmt/format.h>

#include "core/text.h"
#include "report/pod_sections.h"

namespace provision {
namespace {

using namespace network;

toml::array strings(const std::vector<std::string>& values) {
    toml::array array;
    for (const auto& value : values) array.push_back(value);
    return array;
}

toml::table interface_table(const InterfaceReport& interface) {
    toml::table table{{"name", interface.name},
                      {"running", interface.running},
                      {"loopback", interface.loopback},
                      {"addresses", strings(interface.addresses)},
                      {"operstate", interface.state.operstate}};
    if (interface.state.mtu) table.insert_or_assign("mtu", *interface.state.mtu);
    if (interface.state.speed_mbps) table.insert_or_assign("speed_mbps", *interface.state.speed_mbps);
    return table;
}

toml::table route_table(const RouteToMaster& route) {
    toml::table table{{"master_addr", route.master_addr}};
    if (route.address) table.insert_or_assign("address", route.address->str());
    if (route.local) table.insert_or_assign("local_address", route.local->str());
    if (!route.interface.empty()) table.insert_or_assign("interface", route.interface);
    table.insert_or_assign("loopback", route.loopback);
    if (!route.detail.empty()) table.insert_or_assign("detail", route.detail);
    return table;
}

bool is_taken(const NetworkReport& network, std::size_t device, std::size_t port) {
    for (const TakenPort& taken : network.taken)
        if (taken.device == device && taken.port == port) return true;
    return false;
}

toml::array rdma_array(const NetworkReport& network) {
    toml::array devices;
    for (std::size_t d = 0; d < network.rdma.devices.size(); ++d) {
        const RdmaDevice& device = network.rdma.devices[d];
        toml::table entry{{"device", device.name},
                          {"pci_path", device.pci_path},
                          {"verbs_node", device.verbs_node},
                          {"access", std::string(to_string(device.access))}};
        if (!device.access_detail.empty()) entry.insert_or_assign("access_detail", device.access_detail);
        toml::array ports;
        for (std::size_t p = 0; p < device.ports.size(); ++p) {
            const RdmaPort& port = device.ports[p];
            toml::table one{{"port", port.number},
                            {"state", std::string(to_string(port.state))},
                            {"phys_state", port.phys_state},
                            {"link_layer", std::string(to_string(port.link_layer))},
                            {"netdev", port.netdev},
                            {"taken", is_taken(network, d, p)}};
            if (port.rate_gbps) one.insert_or_assign("rate_gbps", *port.rate_gbps);
            if (port.gid) {
                one.insert_or_assign("gid_index", port.gid->index);
                if (port.gid->gid) one.insert_or_assign("gid", gid_words(*port.gid->gid));
                if (port.gid->roce_version) one.insert_or_assign("roce_version", *port.gid->roce_version);
            }
            ports.push_back(std::move(one));
        }
        entry.insert_or_assign("ports", std::move(ports));
        devices.push_back(std::move(entry));
    }
    return devices;
}

toml::table gpudirect_table(const GpuDirectReport& gdr) {
    toml::table table{{"peer_memory", std::string(to_string(gdr.peer_memory))},
                      {"dma_buf", std::string(to_string(gdr.dma_buf))},
                      {"dma_buf_detail", gdr.dma_buf_why},
                      {"level", std::string(to_string(gdr.level))}};
    toml::array gpus;
    for (const GpuDirectGpu& gpu : gdr.gpus) {
        toml::table entry{{"gpu", gpu.gpu}, {"state", std::string(to_string(gpu.state))}};
        if (!gpu.nic.empty()) entry.insert_or_assign("nic", gpu.nic);
        if (gpu.path) entry.insert_or_assign("path", std::string(to_string(*gpu.path)));
        entry.insert_or_assign("acs_redirect", strings(gpu.acs_redirect));
        gpus.push_back(std::move(entry));
    }
    table.insert_or_assign("gpus", std::move(gpus));
    return table;
}

std::string_view blame_name(ProofBlame blame) {
    switch (blame) {
        case ProofBlame::no_part: return "no-part";
        case ProofBlame::passed: return "passed";
        case ProofBlame::own_failure: return "own-failure";
        case ProofBlame::nodes_lost: return "nodes-lost";
        case ProofBlame::network_timeout: break;
    }
    return "network-timeout";
}

toml::table proof_table(const ProofAcrossNodes& proof) {
    toml::table table{{"limit_s", static_cast<double>(proof.limit.count()) / 1000},
                      {"own", std::string(to_string(proof.own))},
                      {"blame", std::string(blame_name(proof.blame))},
                      {"nodes", static_cast<std::int64_t>(proof.nodes)},
                      {"passed", static_cast<std::int64_t>(proof.passed)},
                      {"heard", proof.heard},
                      {"lost_count", static_cast<std::int64_t>(proof.lost_count)}};
    if (!proof.own_detail.empty()) table.insert_or_assign("own_detail", proof.own_detail);
    toml::array lost;
    for (const NodeResult& node : proof.lost)
        lost.push_back(toml::table{{"node", static_cast<std::int64_t>(node.node)},
                                   {"state", std::string(to_string(node.proof))},
                                   {"detail", node.detail}});
    table.insert_or_assign("lost", std::move(lost));
    if (proof.expected_gb_per_s) {
        table.insert_or_assign("expected_bus_gb_per_s", *proof.expected_gb_per_s);
        table.insert_or_assign("expected_from", proof.expected_from);
    }
    return table;
}

}  // namespace

toml::table job_table(const JobShape& job) {
    toml::table table{{"nodes", job.nodes}, {"launcher", std::string(to_string(job.launcher))}};
    if (job.node_rank) table.insert_or_assign("node_rank", *job.node_rank);
    else put_json_null(table, "node_rank");
    return table;
}

toml::table network_table(const NetworkReport& network) {
    toml::table table{{"scope", std::string(network.scope == NetworkScope::job ? "job" : "node")},
                      {"transport", std::string(to_string(network.transport))},
                      {"transport_reason", network.transport_why}};
    if (network.scope == NetworkScope::job) {
        toml::array interfaces;
        for (const InterfaceReport& interface : network.interfaces) interfaces.push_back(interface_table(interface));
        table.insert_or_assign("interfaces", std::move(interfaces));
        std::vector<std::string> names;
        for (const ChosenInterface& chosen : network.socket.interfaces) names.push_back(chosen.name);
        toml::table socket{{"rule", std::string(to_string(network.socket.rule))}, {"interfaces", strings(names)}};
        if (network.socket.bootstrap) socket.insert_or_assign("bootstrap", network.socket.bootstrap->name);
        else put_json_null(socket, "bootstrap");
        table.insert_or_assign("socket", std::move(socket));
        if (network.route) table.insert_or_assign("route", route_table(*network.route));
    }
    table.insert_or_assign("rdma", rdma_array(network));
    table.insert_or_assign("gpudirect", gpudirect_table(network.gpudirect));
    if (const auto& met = network.rendezvous) {
        toml::table rendezvous{{"status", std::string(to_string(met->status))}};
        if (met->status == RendezvousStatus::joined) {
            rendezvous.insert_or_assign("ranks", static_cast<std::int64_t>(met->ranks));
            rendezvous.insert_or_assign("first_rank", static_cast<std::int64_t>(met->first_rank));
        }
        if (!met->missing.empty()) {
            toml::array missing;
            for (const int rank : met->missing) missing.push_back(static_cast<std::int64_t>(rank));
            rendezvous.insert_or_assign("missing", std::move(missing));
        }
        if (met->missing_count > 0) rendezvous.insert_or_assign("missing_count", static_cast<std::int64_t>(met->missing_count));
        if (met->nodes > 0) rendezvous.insert_or_assign("nodes", static_cast<std::int64_t>(met->nodes));
        if (!met->detail.empty()) rendezvous.insert_or_assign("detail", met->detail);
        table.insert_or_assign("rendezvous", std::move(rendezvous));
    }
    if (const auto& proof = network.proof) table.insert_or_assign("proof", proof_table(*proof));
    return table;
}

std::string network_line(const JobShape& job, const std::optional<NetworkReport>& network) {
    if (!network) return job.spans_nodes() ? fmt::format("{} nodes ({})", job.nodes, to_string(job.launcher)) : "";
    std::vector<std::string> parts;
    if (job.spans_nodes())
        parts.push_back(fmt::format("{} nodes ({}), this node {}", job.nodes, to_string(job.launcher),
                                    job.node_rank ? std::to_string(*job.node_rank) : std::string("unknown")));
    parts.push_back(fmt::format("NCCL over {} ({})", network->transport == Transport::ib ? "IB" : "TCP sockets",
                                network->transport_why));
    if (network->scope == NetworkScope::job) {
        const auto& socket = network->socket;
        parts.push_back(socket.interfaces.empty()
                            ? std::string("no socket interface")
                            : fmt::format("interface {} ({})", socket.interfaces.front().name, to_string(socket.rule)));
    }
    const auto& gdr = network->gpudirect;
    std::size_t on = 0;
    for (const GpuDirectGpu& gpu : gdr.gpus) on += gpu.state == GpuDirectState::on ? 1 : 0;
    if (!gdr.gpus.empty() && !network->taken.empty())
        parts.push_back(fmt::format("GPUDirect RDMA on {} of {} GPUs", on, gdr.gpus.size()));
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::string explain_network(const NetworkReport& network) {
    std::string out = "  Network between nodes:\n";
    for (const InterfaceReport& interface : network.interfaces)
        out += fmt::format("    interface {}: {}, operstate {}{}{}, {}\n", echoed(interface.name),
                           interface.running ? "running" : "not running", printable(interface.state.operstate, 32),
                           interface.state.mtu ? fmt::format(", MTU {}", *interface.state.mtu) : std::string(),
                           interface.state.speed_mbps ? fmt::format(", {} Mb/s", *interface.state.speed_mbps)
                                                      : std::string(),
                           interface.addresses.empty() ? std::string("no address")
                                                       : fmt::format("{}", fmt::join(interface.addresses, " ")));
    if (network.route)
        out += fmt::format("    route to MASTER_ADDR {}: {}\n", echoed(network.route->master_addr),
                           network.route->interface.empty() ? printable(network.route->detail, 256)
                                                            : fmt::format("through {} from {}",
                                                                          echoed(network.route->interface),
                                                                          network.route->local->str()));
    for (std::size_t d = 0; d < network.rdma.devices.size(); ++d) {
        const RdmaDevice& device = network.rdma.devices[d];
        for (std::size_t p = 0; p < device.ports.size(); ++p) {
            const RdmaPort& port = device.ports[p];
            out += fmt::format("    {}:{} {} {}{}{}{}\n", echoed(device.name), port.number,
                               to_string(port.link_layer), to_string(port.state),
                               port.rate_text.empty() ? std::string() : fmt::format(", {}", echoed(port.rate_text)),
                               is_taken(network, d, p) ? ", taken by NCCL" : "",
                               device.access == DeviceAccess::usable ? std::string()
                                                                     : fmt::format(", {}", to_string(device.access)));
        }
    }
    for (const GpuDirectGpu& gpu : network.gpudirect.gpus)
        out += fmt::format("    GPU {} -> {}: {}, GPUDirect RDMA {}\n", gpu.gpu,
                           gpu.nic.empty() ? std::string("no NIC") : fmt::format("{}", echoed(gpu.nic)),
                           gpu.path ? std::string(to_string(*gpu.path)) : std::string("path unknown"),
                           to_string(gpu.state));
    return out;
}

}  // namespace provision
