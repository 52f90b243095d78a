#include "network/network_stage.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "core/regular_file.h"
#include "core/shared_library.h"
#include "core/text.h"
#include "nccl/nccl_paths.h"
#include "network/nccl_name_list.h"
#include "network/network_findings.h"
#include "network/sysfs_files.h"

namespace provision::network {
namespace {

constexpr std::size_t kMostStandInBytes = 1 << 20;
constexpr std::size_t kMostConfigBytes = 4096;  // a PCI function's whole configuration space

InterfaceList interface_list(const NetworkRoots& roots) {
    if (!roots.interfaces_file) return read_interfaces();
    std::string error;
    const auto text = read_regular_file(*roots.interfaces_file, kMostStandInBytes, error);
    if (!text) {
        InterfaceList list;
        list.error = fmt::format("{}: {}", echoed_path(*roots.interfaces_file), error);
        return list;
    }
    InterfaceList list = parse_interface_stand_in(*text);
    if (!list.error.empty())
        list.error = fmt::format("{}: {}", echoed_path(*roots.interfaces_file), list.error);
    return list;
}

InterfaceReport interface_report(const InterfaceList& list, const std::string& name, const std::string& sysfs) {
    InterfaceReport report;
    report.name = name;
    for (const InterfaceAddress& entry : list.entries) {
        if (entry.name != name) continue;
        report.running = report.running || entry.running;
        report.loopback = report.loopback || entry.loopback;
        if (entry.address.family == Family::other) continue;
        int bits = 0;
        for (std::uint8_t byte : entry.netmask.bytes)
            for (int bit = 7; bit >= 0; --bit) bits += (byte >> bit) & 1;
        if (report.addresses.size() < 16) report.addresses.push_back(fmt::format("{}/{}", entry.address.str(), bits));
    }
    report.state = read_interface_state(sysfs, name);
    return report;
}

// The ports NCCL's IB transport takes (net_ib/init.cc ncclIbInitDevices):
// devices it can open (any, for a node's facts), ACTIVE ports of link
// layer InfiniBand or Ethernet, as NCCL_IB_HCA allows, at most MAX_IB_DEVS.
std::vector<TakenPort> taken_ports(const RdmaReading& rdma, const NcclNameList& hca, bool need_access) {
    std::vector<TakenPort> taken;
    for (std::size_t d = 0; d < rdma.devices.size(); ++d) {
        const RdmaDevice& device = rdma.devices[d];
        if (need_access && device.access != DeviceAccess::usable) continue;
        for (std::size_t p = 0; p < device.ports.size(); ++p) {
            const RdmaPort& port = device.ports[p];
            if (static_cast<int>(taken.size()) >= kNcclMaxIbDevices) return taken;
            if (port.state != PortState::active || port.link_layer == LinkLayer::other) continue;
            if (!hca.takes(device.name, port.number)) continue;
            taken.push_back({d, p});
        }
    }
    return taken;
}

// What the RDMA bounds left out, each said once.
void add_rdma_bound_notes(const RdmaReading& rdma, std::vector<std::string>& notes) {
    if (rdma.devices_left_out > 0 || rdma.listing_stopped)
        notes.push_back(fmt::format(
            "{}{} RDMA devices were not read, past the bound of {} (those read: the first in NCCL's order, by "
            "name, and those NCCL_IB_HCA names)",
            rdma.listing_stopped ? "more than " : "", rdma.devices_left_out, kMostRdmaDevices));
    for (const RdmaDevice& device : rdma.devices)
        if (device.ports_left_out > 0)
            notes.push_back(fmt::format("{} ports of RDMA device {} were not read, past the bound of {} (those read: "
                                        "the lowest numbers)",
                                        device.ports_left_out, echoed(device.name), kMostRdmaPorts));
}

void read_gids(NetworkReport& report, const NetworkSettings& settings) {
    GidTableReader reader{settings.roots.sysfs};
    for (const TakenPort& taken : report.taken) {
        RdmaDevice& device = report.rdma.devices[taken.device];
        RdmaPort& port = device.ports[taken.port];
        const bool infiniband = port.link_layer == LinkLayer::infiniband;
        // InfiniBand needs the entry at the routable FLID's index alone; RoCE the whole table.
        const long long routable = nccl_parameter(settings.nccl.gid.routable_flid_index).value_or(1);
        const std::size_t wanted =
            infiniband ? static_cast<std::size_t>(std::clamp(routable, 0LL, 1LL << 20)) + 1 : kMostGids;
        reader.read(device.name, port, wanted);
        port.gid = nccl_gid_choice(
            infiniband, port.gids,
            [&](int index) { return reader.roce_version(device.name, port.number, index); }, settings.nccl.gid);
    }
}

void decide_transport(NetworkReport& report, const NetworkSettings& settings) {
    const auto& nccl = settings.nccl;
    report.transport = Transport::socket;
    if (nccl.net && lowercase(*nccl.net) == "socket") {
        report.transport_why = "NCCL_NET=Socket";
    } else if (nccl_parameter(nccl.ib_disable).value_or(0) != 0) {
        report.transport_why = "NCCL_IB_DISABLE is set";
    } else if (report.taken.empty()) {
        report.transport_why = report.rdma.devices.empty() ? "no RDMA device" : "no RDMA port NCCL can use";
    } else if (settings.scope == NetworkScope::job && report.socket.interfaces.empty()) {
        report.transport_why = "no IP interface for NET/IB's out-of-band exchange";
    } else if (settings.scope == NetworkScope::job && !SharedLibrary(settings.roots.ibverbs_library).loaded()) {
        // NCCL opens libibverbs with dlopen too (src/misc/ibvwrap.cc): without it there is no IB transport.
        report.ibverbs_missing = true;
        report.transport_why =
            fmt::format("{} is not installed", echoed_path(settings.roots.ibverbs_library));
    } else {
        report.transport = Transport::ib;
        report.transport_why = fmt::format("{} RDMA port{}", report.taken.size(), report.taken.size() == 1 ? "" : "s");
    }
}

void decide_dma_buf(NetworkReport& report, const NetworkSettings& settings) {
    GpuDirectReport& gdr = report.gpudirect;
    const DmaBufFacts& facts = gdr.dma_buf_facts;
    gdr.dma_buf = DmaBuf::unknown;
    if (!facts.enabled) {
        gdr.dma_buf = DmaBuf::unsupported;
        gdr.dma_buf_why = "NCCL_DMABUF_ENABLE=0";
        return;
    }
    if (facts.kernel_new_enough == false) {
        gdr.dma_buf = DmaBuf::unsupported;
        gdr.dma_buf_why = fmt::format("kernel {} is older than 5.12, the first to import dma-buf into RDMA",
                                      echoed(facts.kernel_release));
        return;
    }
    if (facts.open_kernel_module == false) {
        gdr.dma_buf = DmaBuf::unsupported;
        gdr.dma_buf_why = "NVIDIA's proprietary kernel module is loaded: GPUs export dma-buf only with the open "
                          "kernel modules";
        return;
    }
    // The NIC's side: NCCL's own probe, where it is worth making.
    if (settings.scope == NetworkScope::job && report.transport == Transport::ib &&
        gdr.peer_memory == PeerMemory::none) {
        const RdmaDevice& device = report.rdma.devices[report.taken.front().device];
        gdr.probe = probe_dma_buf(settings.roots.ibverbs_library, device.name);
        if (gdr.probe.outcome == ProbeOutcome::supported) gdr.dma_buf = DmaBuf::supported;
        if (gdr.probe.outcome == ProbeOutcome::unsupported) gdr.dma_buf = DmaBuf::unsupported;
        gdr.dma_buf_why = gdr.probe.detail;
        return;
    }
    gdr.dma_buf_why = "not probed";
}

PciFacts pci_facts(const std::string& sysfs) {
    PciFacts facts;
    facts.numa_node = [sysfs](const std::string& path) {
        return read_attribute(sysfs + path + "/numa_node", 16).value_or("-1");
    };
    facts.device_id = [sysfs](const std::string& bus_id) -> std::optional<std::uint64_t> {
        if (!is_bus_id(bus_id)) return std::nullopt;
        std::uint64_t id = 0;
        for (const char* name : {"vendor", "device", "subsystem_vendor", "subsystem_device"}) {
            const auto text = read_attribute(sysfs + "/bus/pci/devices/" + bus_id + "/" + name, 16);
            if (!text) return std::nullopt;
            const unsigned long value = std::strtoul(text->c_str(), nullptr, 16);
            id = (id << 16) | (value & 0xffff);
        }
        return id;
    };
    return facts;
}

AcsRedirect bridge_acs(const std::string& sysfs, const std::string& bus_id) {
    if (!is_bus_id(bus_id)) return AcsRedirect::unknown;
    std::string error;
    const auto config =
        read_regular_file(sysfs + "/bus/pci/devices/" + bus_id + "/config", kMostConfigBytes, error, /*truncate=*/true);
    return config ? acs_redirect_of(*config) : AcsRedirect::unknown;
}

// Each visible GPU against the nearest NIC NCCL takes.
void judge_gpus(NetworkReport& report, const Inventory& inventory, const NetworkSettings& settings) {
    GpuDirectReport& gdr = report.gpudirect;
    const std::string& sysfs = settings.roots.sysfs;
    const PciFacts facts = pci_facts(sysfs);
    const bool supported = gdr.peer_memory != PeerMemory::none || gdr.dma_buf == DmaBuf::supported;
    std::vector<std::size_t> devices;
    for (const TakenPort& taken : report.taken)
        if (std::find(devices.begin(), devices.end(), taken.device) == devices.end()) devices.push_back(taken.device);
    for (const Gpu& gpu : inventory.gpus) {
        GpuDirectGpu entry;
        entry.gpu = gpu.index;
        const auto gpu_path = is_bus_id(lowercase(gpu.pci_bus_id))
                                  ? resolve_within(sysfs, sysfs + "/bus/pci/devices/" + lowercase(gpu.pci_bus_id))
                                  : std::nullopt;
        std::optional<PciPath> best;
        for (const std::size_t d : devices) {
            const RdmaDevice& device = report.rdma.devices[d];
            if (!gpu_path || device.pci_path.empty()) continue;
            PciPath path = nccl_pci_path(*gpu_path, device.pci_path, facts);
            if (!best || path.type < best->type) {
                best = std::move(path);
                entry.nic = device.name;
            }
        }
        if (devices.empty()) {
            entry.state = GpuDirectState::no_nic;
        } else if (!best) {
            entry.state = GpuDirectState::unknown;  // no PCI path for the GPU or the NICs
        } else {
            entry.path = best->type;
            if (best->type <= gdr.level) {
                for (const std::string& bridge : best->bridges) {
                    const AcsRedirect acs = bridge_acs(sysfs, bridge);
                    if (acs == AcsRedirect::on) entry.acs_redirect.push_back(bridge);
                    if (acs == AcsRedirect::unknown) entry.acs_unknown.push_back(bridge);
                }
            }
            if (best->type > gdr.level) entry.state = GpuDirectState::too_far;
            else if (supported) entry.state = GpuDirectState::on;
            else if (gdr.dma_buf == DmaBuf::unknown) entry.state = GpuDirectState::unknown;
            else entry.state = GpuDirectState::unsupported;
        }
        gdr.gpus.push_back(std::move(entry));
    }
}

}  // namespace

std::string_view to_string(Transport transport) { return transport == Transport::ib ? "ib" : "socket"; }

std::string_view to_string(GpuDirectState state) {
    switch (state) {
        case GpuDirectState::on: return "on";
        case GpuDirectState::too_far: return "too-far";
        case GpuDirectState::unsupported: return "unsupported";
        case GpuDirectState::no_nic: return "no-nic";
        case GpuDirectState::unknown: break;
    }
    return "unknown";
}

std::string_view to_string(DmaBuf state) {
    switch (state) {
        case DmaBuf::supported: return "supported";
        case DmaBuf::unsupported: return "unsupported";
        case DmaBuf::unknown: break;
    }
    return "unknown";
}

void add_network_settings(const NetworkReport& network, EnvSettings& env) {
    for (const auto& [name, value] : network.write) env.set(name, value);
    for (const KeptVariable& kept : network.kept) env.keep(kept);
}

NetworkReport read_network(const NetworkSettings& settings) {
    NetworkReport report;
    report.scope = settings.scope;
    const NetworkRoots& roots = settings.roots;
    if (settings.scope == NetworkScope::job) {
        report.interface_list = interface_list(roots);
        if (!report.interface_list.error.empty())
            report.notes.push_back(
                fmt::format("the network interfaces cannot be read: {}", report.interface_list.error));
        if (report.interface_list.left_out > 0)
            report.notes.push_back(fmt::format(
                "{} interface entries were not read, past the bound (those read, in getifaddrs' order, NCCL's: the "
                "first {} with an address, and the first {} of the rest)",
                report.interface_list.left_out, kMostInterfaceEntries, kMostInterfaceEntries));
        report.socket = choose_socket_interfaces(report.interface_list, settings.nccl.socket);
        report.notes.insert(report.notes.end(), report.socket.notes.begin(), report.socket.notes.end());
        if (!settings.job.master_addr.empty())
            report.route = route_to_master(settings.job.master_addr, report.interface_list, roots.route_local);
        std::vector<std::string> names;
        for (const ChosenInterface& chosen : report.socket.interfaces) names.push_back(chosen.name);
        if (report.socket.bootstrap) names.push_back(report.socket.bootstrap->name);
        if (report.route && !report.route->interface.empty()) names.push_back(report.route->interface);
        for (const std::string& name : names)
            if (std::none_of(report.interfaces.begin(), report.interfaces.end(),
                             [&](const InterfaceReport& one) { return one.name == name; }))
                report.interfaces.push_back(interface_report(report.interface_list, name, roots.sysfs));
    }
    const NcclNameList hca = parse_nccl_name_list(settings.nccl.ib_hca.value_or(""), kNcclMaxIbDevices);
    report.rdma = read_rdma_devices(roots.sysfs, roots.dev, [&](const std::string& name) {
        return !hca.exclude && !hca.entries.empty() && hca.takes(name);  // a list that names devices
    });
    add_rdma_bound_notes(report.rdma, report.notes);
    report.taken = taken_ports(report.rdma, hca, settings.scope == NetworkScope::job);
    decide_transport(report, settings);
    if (settings.scope == NetworkScope::job && report.transport == Transport::ib) read_gids(report, settings);
    GpuDirectReport& gdr = report.gpudirect;
    gdr.peer_memory = read_peer_memory(roots.sysfs);
    gdr.dma_buf_facts = read_dma_buf_facts(roots.proc, settings.nccl.dmabuf_enable);
    gdr.level = gdr_level(settings.nccl.gdr_level, settings.nccl.gdr_c2c);
    gdr.topology_file = settings.nccl.topo_file.has_value() && !settings.nccl.topo_file->empty();
    decide_dma_buf(report, settings);
    return report;
}

void judge_network(NetworkReport& report, const Inventory& inventory, const HealthPolicy& policy,
                   const NetworkSettings& settings) {
    judge_gpus(report, inventory, settings);
    if (settings.scope == NetworkScope::job) add_network_findings(report, settings, policy);
}

std::future<NetworkReport> start_network_reading(const NetworkSettings& settings) {
    std::promise<NetworkReport> promise;
    auto future = promise.get_future();
    std::thread([promise = std::move(promise), settings]() mutable {
        try {
            promise.set_value(read_network(settings));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
    }).detach();
    return future;
}

}  // namespace provision::network
