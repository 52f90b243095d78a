#include "network/network_findings.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "nccl/nccl_paths.h"
#include "network/nccl_name_list.h"

namespace provision::network {
namespace {

constexpr std::size_t kMostNamesListed = 32;

// "eth0 (up, 10.0.0.5), lo (up, 127.0.0.1), eth1 (down)" for a message.
std::string interfaces_words(const InterfaceList& list) {
    const auto names = interface_names(list);
    std::vector<std::string> words;
    for (std::size_t i = 0; i < names.size() && i < kMostNamesListed; ++i) {
        bool running = false;
        std::vector<std::string> addresses;
        for (const InterfaceAddress& entry : list.entries) {
            if (entry.name != names[i]) continue;
            running = running || entry.running;
            if (entry.address.family != Family::other && addresses.size() < 2) addresses.push_back(entry.address.str());
        }
        words.push_back(fmt::format("{} ({}{})", echoed(names[i]), running ? "up" : "down",
                                    addresses.empty() ? std::string(", no address")
                                                      : ", " + fmt::format("{}", fmt::join(addresses, ", "))));
    }
    if (names.empty()) return "none";
    std::string text = fmt::format("{}", fmt::join(words, ", "));
    if (names.size() > kMostNamesListed) text += fmt::format(" and {} more", names.size() - kMostNamesListed);
    return text;
}

// Whether NCCL could take `name` at all: running, with an address of the family asked for.
bool usable_interface(const InterfaceList& list, const std::string& name, const NcclSocketVariables& socket) {
    Family family = Family::other;
    if (socket.socket_family == "AF_INET") family = Family::ipv4;
    if (socket.socket_family == "AF_INET6") family = Family::ipv6;
    return std::any_of(list.entries.begin(), list.entries.end(), [&](const InterfaceAddress& entry) {
        return entry.name == name && entry.running && entry.address.family != Family::other &&
               (family == Family::other || entry.address.family == family);
    });
}

// A name NCCL can be told in a variable: printable as is (no control characters).
bool writable_name(const std::string& name) {
    return safe_file_name(name) && std::all_of(name.begin(), name.end(), [](char c) {
               const auto byte = static_cast<unsigned char>(c);
               return byte > 0x20 && byte < 0x7f;
           });
}

class Findings {
public:
    Findings(NetworkReport& report, const HealthPolicy& policy) : report_(report), policy_(policy) {}
    void add(const char* signal, std::string words, int gpu = -1) {
        report_.findings.push_back({gpu, -1, signal, policy_.level(signal), std::move(words)});
    }

private:
    NetworkReport& report_;
    const HealthPolicy& policy_;
};

void judge_socket(NetworkReport& report, const NetworkSettings& settings, Findings& findings) {
    const NcclSocketVariables& socket = settings.nccl.socket;
    const auto ifname = effective_socket_ifname(socket);
    const InterfaceList& list = report.interface_list;
    const std::string failure = "NCCL stops with \"Bootstrap : no socket interface found\" (NVIDIA/nccl#1837)";
    if (report.socket.interfaces.empty()) {
        if (ifname) {
            const NcclNameList names = parse_nccl_name_list(*ifname, kNcclMaxInterfaces);
            std::vector<std::string> named;
            for (const std::string& name : interface_names(list))
                if (names.takes(name) && named.size() < kMostNamesListed) named.push_back(fmt::format("{}", echoed(name)));
            if (!named.empty())
                findings.add("bootstrap_interface_down",
                             fmt::format("NCCL_SOCKET_IFNAME={} names {}, which {} down or without an address{}: {}; "
                                         "the interfaces here: {}",
                                         echoed(*ifname), fmt::join(named, ", "),
                                         named.size() == 1 ? "is" : "are",
                                         socket.socket_family ? " of NCCL_SOCKET_FAMILY's family" : "", failure,
                                         interfaces_words(list)));
            else
                findings.add("socket_ifname_unmatched",
                             fmt::format("NCCL_SOCKET_IFNAME={} matches none of this container's interfaces: {}; "
                                         "the interfaces here: {}",
                                         echoed(*ifname), failure, interfaces_words(list)));
        } else {
            findings.add("bootstrap_interface_down",
                         fmt::format("no interface here is up with an IPv4 or IPv6 address for NCCL to take: {}; "
                                     "the interfaces here: {}",
                                     failure, interfaces_words(list)));
        }
        return;
    }
    const auto& route = report.route;
    if (!route) return;
    if (route->interface.empty()) {
        report.notes.push_back(fmt::format("the route to MASTER_ADDR={} is not known ({}): NCCL's interface is not "
                                           "checked against it",
                                           echoed(route->master_addr), route->detail));
        return;
    }
    if (route->loopback) return;  // MASTER_ADDR is on this host: any address of NCCL's reaches it
    const ChosenInterface& nccl = report.socket.interfaces.front();
    if (nccl.name == route->interface) return;
    const std::string what = fmt::format(
        "NCCL would take {} ({}) by {}, but the kernel reaches MASTER_ADDR={} ({}) through {} (from {}): the other "
        "nodes may not reach {}'s address, and NCCL's start then hangs or fails (NVIDIA/nccl#913, #1581)",
        echoed(nccl.name), nccl.address.str(),
        ifname ? fmt::format("NCCL_SOCKET_IFNAME={}", echoed(*ifname))
               : fmt::format("its default rule ({})", to_string(report.socket.rule)),
        echoed(route->master_addr), route->address ? route->address->str() : "",
        echoed(route->interface), route->local ? route->local->str() : "", echoed(nccl.name));
    if (ifname) {
        report.kept.push_back({"NCCL_SOCKET_IFNAME", *socket.socket_ifname, "=" + route->interface, ""});
        findings.add("bootstrap_interface_mismatch",
                     fmt::format("{}; NCCL_SOCKET_IFNAME={} stays, as the user set it", what,
                                 echoed(*ifname)));
    } else if (!usable_interface(list, route->interface, socket)) {
        findings.add("bootstrap_interface_mismatch",
                     fmt::format("{}; {} is not up with an address NCCL can take, so nothing is written",
                                 what, echoed(route->interface)));
    } else if (!writable_name(route->interface)) {
        findings.add("bootstrap_interface_mismatch",
                     fmt::format("{}; its name holds characters a variable should not carry, so nothing is written",
                                 what));
    } else {
        const std::string value = "=" + route->interface;
        report.write.emplace_back("NCCL_SOCKET_IFNAME", value);
        findings.add("bootstrap_interface_mismatch", fmt::format("{}; NCCL_SOCKET_IFNAME={} is written", what, value));
    }
}

std::string port_name(const RdmaDevice& device, const RdmaPort& port) {
    return fmt::format("{}:{}", echoed(device.name), port.number);
}

void judge_rdma(NetworkReport& report, const NetworkSettings& settings, bool ibverbs_loadable, Findings& findings) {
    const RdmaReading& rdma = report.rdma;
    const NcclNameList hca = parse_nccl_name_list(settings.nccl.ib_hca.value_or(""), kNcclMaxIbDevices);
    const std::string consequence =
        report.transport == Transport::socket
            ? "NCCL moves everything between nodes over TCP sockets without an error (its log says only \"NET/IB : "
              "No device found\"; NVIDIA/nccl#451, #941)"
            : "NCCL uses only the ports it can open";
    std::vector<std::string> hidden;
    std::string why;
    for (const RdmaDevice& device : rdma.devices) {
        // A device counts where NCCL would take a port of it, could it open it.
        const bool wanted = std::any_of(device.ports.begin(), device.ports.end(), [&](const RdmaPort& port) {
            return port.state == PortState::active && port.link_layer != LinkLayer::other &&
                   hca.takes(device.name, port.number);
        });
        if (device.access == DeviceAccess::usable || !wanted) continue;
        if (hidden.size() < kMostNamesListed) hidden.push_back(fmt::format("{}", echoed(device.name)));
        if (why.empty())
            why = device.access == DeviceAccess::no_verbs_device
                      ? fmt::format("{} has no verbs device in sysfs", echoed(device.name))
                      : fmt::format("/dev/infiniband/{}: {}", echoed(device.verbs_node), device.access_detail);
    }
    const std::string request =
        "the pod must be given them: on Kubernetes a resource of the RDMA device plugin (rdma/..., or an SR-IOV "
        "network's) and the IPC_LOCK capability; with Docker --device=/dev/infiniband --cap-add=IPC_LOCK";
    if (!hidden.empty())
        findings.add("rdma_devices_hidden",
                     fmt::format("the host has RDMA device{} {} that this container cannot open ({}): {}; {}",
                                 hidden.size() == 1 ? "" : "s", fmt::join(hidden, ", "), why, consequence, request));
    else if (!report.taken.empty() && !ibverbs_loadable)
        findings.add("rdma_devices_hidden",
                     fmt::format("the host's RDMA devices are here, but {} is not in the image, and NCCL's IB "
                                 "transport needs it: {}; install rdma-core's libibverbs (Debian and Ubuntu: "
                                 "libibverbs1 ibverbs-providers)",
                                 echoed_path(settings.roots.ibverbs_library), consequence));

    if (settings.nccl.ib_hca && report.taken.empty()) {
        std::vector<std::string> active;
        for (const RdmaDevice& device : rdma.devices)
            for (const RdmaPort& port : device.ports)
                if (device.access == DeviceAccess::usable && port.state == PortState::active &&
                    active.size() < kMostNamesListed)
                    active.push_back(port_name(device, port));
        if (!active.empty())
            findings.add("ib_hca_unmatched",
                         fmt::format("NCCL_IB_HCA={} leaves NCCL none of the active ports ({}): NCCL moves "
                                     "everything between nodes over TCP sockets",
                                     echoed(*settings.nccl.ib_hca), fmt::join(active, ", ")));
    }

    std::vector<std::string> initializing;
    for (const RdmaDevice& device : rdma.devices)
        for (const RdmaPort& port : device.ports)
            if (port.state == PortState::init && hca.takes(device.name, port.number) &&
                initializing.size() < kMostNamesListed)
                initializing.push_back(port_name(device, port));
    if (!initializing.empty())
        findings.add("rdma_port_init",
                     fmt::format("port{} {} {} in INIT: no subnet manager has brought {} up yet (opensm, or the "
                                 "fabric's managed switches), and NCCL leaves ports that are not ACTIVE out",
                                 initializing.size() == 1 ? "" : "s", fmt::join(initializing, ", "),
                                 initializing.size() == 1 ? "is" : "are", initializing.size() == 1 ? "it" : "them"));

    double fastest = 0;
    for (const TakenPort& taken : report.taken)
        fastest = std::max(fastest, rdma.devices[taken.device].ports[taken.port].rate_gbps.value_or(0));
    std::vector<std::string> slow;
    bool infiniband = false, ethernet = false;
    for (const TakenPort& taken : report.taken) {
        const RdmaDevice& device = rdma.devices[taken.device];
        const RdmaPort& port = device.ports[taken.port];
        infiniband = infiniband || port.link_layer == LinkLayer::infiniband;
        ethernet = ethernet || port.link_layer == LinkLayer::ethernet;
        if (port.rate_gbps && *port.rate_gbps < fastest && slow.size() < kMostNamesListed)
            slow.push_back(fmt::format("{} at {}", port_name(device, port), echoed(port.rate_text)));
    }
    if (!slow.empty())
        findings.add("rdma_port_slow",
                     fmt::format("{} run{} slower than the fastest port NCCL takes ({:g} Gb/sec): a link trained "
                                 "down (a cable, a transceiver, a switch port) holds every ring through it to its "
                                 "speed",
                                 fmt::join(slow, ", "), slow.size() == 1 ? "s" : "", fastest));
    if (infiniband && ethernet)
        findings.add("rdma_link_layers_mixed",
                     "NCCL would take InfiniBand and RoCE (Ethernet) ports together, which it cannot merge ("
                     "\"NET/IB : Attempted to merge incompatible devices\"); choose one kind with NCCL_IB_HCA");

    for (const TakenPort& taken : report.taken) {
        const RdmaDevice& device = rdma.devices[taken.device];
        const RdmaPort& port = device.ports[taken.port];
        if (port.link_layer != LinkLayer::ethernet || !port.gid) continue;
        const GidChoice& gid = *port.gid;
        if (gid.gid && gid_valid(*gid.gid)) continue;
        const std::string which =
            !gid.gid || !gid_configured(*gid.gid)
                ? fmt::format("GID index {}, which is not set", gid.index)
                : fmt::format("GID index {} ({}), which is link-local", gid.index, gid_words(*gid.gid));
        findings.add("roce_gid_unusable",
                     fmt::format("on RoCE port {} NCCL would take {}{}: no GID of the port carries a routable "
                                 "address, so connections between nodes time out (IB error 12; NVIDIA/nccl#426, "
                                 "#769); give {} an IP address{}",
                                 port_name(device, port), which, gid.from_user ? " (NCCL_IB_GID_INDEX)" : "",
                                 port.netdev.empty() ? std::string("the port's interface") : fmt::format("{}", echoed(port.netdev)),
                                 gid.from_user ? ", or set NCCL_IB_GID_INDEX to the index of a RoCE v2 GID that "
                                                 "holds one"
                                               : ""));
    }
}

void judge_gpudirect(NetworkReport& report, Findings& findings) {
    const GpuDirectReport& gdr = report.gpudirect;
    if (gdr.peer_memory == PeerMemory::none && gdr.dma_buf == DmaBuf::unsupported)
        findings.add("gpudirect_unavailable",
                     fmt::format("no GPUDirect RDMA: no peer-memory module is loaded (nvidia-peermem: modprobe "
                                 "nvidia-peermem on the host, or the GPU Operator's driver.rdma.enabled) and dma-buf "
                                 "cannot serve ({}): NCCL stages all traffic between nodes through host memory, "
                                 "about half the bandwidth (NVIDIA/nccl#897, #1412)",
                                 gdr.dma_buf_why));
    if (gdr.topology_file) {
        report.notes.push_back("NCCL_TOPO_FILE is set: NCCL reads the GPUs' paths to the NICs from it, so they are "
                               "not judged from sysfs");
        return;
    }
    std::set<std::string> unknown;
    for (const GpuDirectGpu& gpu : gdr.gpus) {
        if (gpu.state == GpuDirectState::too_far && gpu.path)
            findings.add("gpudirect_too_far",
                         fmt::format("GPU {}'s nearest NIC NCCL takes, {}, is {} away ({}), beyond {} "
                                     "(NCCL_NET_GDR_LEVEL, src/graph/paths.cc): NCCL sends this GPU's traffic between "
                                     "nodes through host memory",
                                     gpu.gpu, echoed(gpu.nic), to_string(*gpu.path),
                                     *gpu.path == PathType::sys ? "across CPU sockets" : "through the CPU",
                                     to_string(gdr.level)),
                         gpu.gpu);
        if (!gpu.acs_redirect.empty())
            findings.add("pcie_acs_redirect",
                         fmt::format("ACS redirection is on at the PCIe bridge{} {} between GPU {} and {}: its "
                                     "GPUDirect RDMA traffic is sent up to the root complex, the likely cause of hangs "
                                     "and IB completion error 4 (NVIDIA/nccl#304, #928, #2079); turn ACS off on the "
                                     "switch's ports (the BIOS, or setpci at boot)",
                                     gpu.acs_redirect.size() == 1 ? "" : "s", fmt::join(gpu.acs_redirect, ", "),
                                     gpu.gpu, echoed(gpu.nic)),
                         gpu.gpu);
        unknown.insert(gpu.acs_unknown.begin(), gpu.acs_unknown.end());
    }
    if (!unknown.empty())
        report.notes.push_back(fmt::format("ACS could not be read on {} PCIe bridge{} between the GPUs and their NICs "
                                           "(their extended configuration space needs CAP_SYS_ADMIN)",
                                           unknown.size(), unknown.size() == 1 ? "" : "s"));
}

}  // namespace

void add_network_findings(NetworkReport& report, const NetworkSettings& settings, const HealthPolicy& policy) {
    Findings findings(report, policy);
    judge_socket(report, settings, findings);
    const bool ib_wanted = !(settings.nccl.net && lowercase(*settings.nccl.net) == "socket") &&
                           nccl_parameter(settings.nccl.ib_disable).value_or(0) == 0;
    if (!ib_wanted) return;
    judge_rdma(report, settings, !report.ibverbs_missing, findings);
    if (report.transport == Transport::ib) judge_gpudirect(report, findings);
}

}  // namespace provision::network
