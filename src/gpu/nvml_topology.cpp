#include "gpu/nvml_topology.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpu/nvml_fabric.h"
#include "gpu/pcie_sysfs.h"

namespace provision {

namespace {

struct TopologyFunctions {
    nvml::DeviceGetPciInfoFn pci_info = nullptr;
    nvml::DeviceGetP2PStatusFn p2p_status = nullptr;
    nvml::DeviceGetTopologyCommonAncestorFn common_ancestor = nullptr;
    nvml::DeviceGetNvLinkStateFn nvlink_state = nullptr;
    nvml::DeviceGetNvLinkVersionFn nvlink_version = nullptr;
    nvml::DeviceGetNvLinkRemotePciInfoFn nvlink_remote_pci = nullptr;
    nvml::DeviceGetNvLinkRemoteDeviceTypeFn nvlink_remote_type = nullptr;
    nvml::DeviceGetPcieLinkFn current_generation = nullptr;
    nvml::DeviceGetPcieLinkFn current_width = nullptr;
    nvml::DeviceGetPcieLinkFn max_generation = nullptr;
    nvml::DeviceGetPcieLinkFn max_width = nullptr;
    nvml::DeviceGetGpuFabricInfoVFn fabric_v = nullptr;
    nvml::DeviceGetGpuFabricInfoFn fabric = nullptr;
    nvml::DeviceGetGpuFabricInfoV4Fn fabric_v4 = nullptr;

    void load(const SharedLibrary& library) {
        library.resolve({
            Symbol::optional(fabric_v4, "nvmlDeviceGetGpuFabricInfo_v4"),
            Symbol::optional(fabric_v, "nvmlDeviceGetGpuFabricInfoV"),
            Symbol::optional(fabric, "nvmlDeviceGetGpuFabricInfo"),
            Symbol::optional(pci_info, "nvmlDeviceGetPciInfo_v3"),
            Symbol::optional(p2p_status, "nvmlDeviceGetP2PStatus"),
            Symbol::optional(common_ancestor, "nvmlDeviceGetTopologyCommonAncestor"),
            Symbol::optional(nvlink_state, "nvmlDeviceGetNvLinkState"),
            Symbol::optional(nvlink_version, "nvmlDeviceGetNvLinkVersion"),
            Symbol::optional(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2"),
            Symbol::optional(nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType"),
            Symbol::optional(current_generation, "nvmlDeviceGetCurrPcieLinkGeneration"),
            Symbol::optional(current_width, "nvmlDeviceGetCurrPcieLinkWidth"),
            Symbol::optional(max_generation, "nvmlDeviceGetMaxPcieLinkGeneration"),
            Symbol::optional(max_width, "nvmlDeviceGetMaxPcieLinkWidth"),
        });
    }
};

using PciAddress = std::tuple<unsigned, unsigned, unsigned>;  // domain, bus, device

// Where one GPU's active NVLink links lead.
struct LinkEnds {
    std::vector<PciAddress> gpus;  // one entry per link to a GPU
    unsigned to_switch = 0;        // links to an NVSwitch
};

struct GpuLinks {
    std::optional<PciAddress> address;
    LinkEnds ends;
};

std::optional<unsigned> query(nvml::DeviceGetPcieLinkFn function, nvml::Device device) {
    unsigned value = 0;
    if (!function || function(device, &value) != nvml::SUCCESS || value == 0) return std::nullopt;
    return value;
}

std::optional<PcieLink> read_pcie(const TopologyFunctions& nvml, nvml::Device device) {
    const auto generation = query(nvml.current_generation, device);
    const auto width = query(nvml.current_width, device);
    const auto max_generation = query(nvml.max_generation, device);
    const auto max_width = query(nvml.max_width, device);
    if (!generation || !width || !max_generation || !max_width) return std::nullopt;
    return PcieLink{*generation, *width, *max_generation, *max_width};
}

// Asks every link index up to the limit; a GPU without NVLink answers
// NOT_SUPPORTED for each, an index past the driver's maximum
// INVALID_ARGUMENT, which ends the loop.
GpuLinks read_nvlinks(const TopologyFunctions& nvml, nvml::Device device, Gpu& gpu) {
    GpuLinks links;
    if (nvml.pci_info) {
        nvml::PciInfo own{};
        if (nvml.pci_info(device, &own) == nvml::SUCCESS) links.address = PciAddress{own.domain, own.bus, own.device};
    }
    if (!nvml.nvlink_state) return links;
    NvLinkCount count;
    for (unsigned link = 0; link < nvml::nvlink_index_limit; ++link) {
        unsigned state = 0;
        const nvml::Return code = nvml.nvlink_state(device, link, &state);
        if (code == nvml::ERROR_INVALID_ARGUMENT) break;
        if (code != nvml::SUCCESS) continue;
        ++count.total;
        if (state != static_cast<unsigned>(nvml::feature_enabled)) continue;
        ++count.active;
        if (gpu.nvlink_generation == 0 && nvml.nvlink_version) {
            unsigned version = 0;
            if (nvml.nvlink_version(device, link, &version) == nvml::SUCCESS)
                gpu.nvlink_generation = nvlink_generation_of(version);
        }
        int type = -1;
        if (nvml.nvlink_remote_type && nvml.nvlink_remote_type(device, link, &type) == nvml::SUCCESS &&
            type == nvml::nvlink_device_switch) {
            ++links.ends.to_switch;
            continue;
        }
        nvml::PciInfo remote{};
        if (nvml.nvlink_remote_pci && nvml.nvlink_remote_pci(device, link, &remote) == nvml::SUCCESS)
            links.ends.gpus.emplace_back(remote.domain, remote.bus, remote.device);
    }
    if (count.total > 0) gpu.nvlinks = count;
    return links;
}

// The newest struct the driver answers, down to v1: every symbol and
// version optional, an old driver's answer is what it knows.
std::optional<GpuFabric> read_fabric(const TopologyFunctions& nvml, nvml::Device device) {
    if (nvml.fabric_v4) {
        // Room beyond the struct: a driver whose v4 is longer than the
        // header this build read writes into the spare bytes, not the stack.
        union {
            nvml::GpuFabricInfoV4 info;
            unsigned char room[4096];
        } answer{};
        if (nvml.fabric_v4(device, &answer.info) == nvml::SUCCESS) return fabric_from(answer.info);
    }
    if (nvml.fabric_v) {
        nvml::GpuFabricInfoV3 v3{};
        v3.version = nvml::gpu_fabric_info_v3;
        if (nvml.fabric_v(device, &v3) == nvml::SUCCESS) return fabric_from(v3);
        nvml::GpuFabricInfoV2 v2{};
        v2.version = nvml::gpu_fabric_info_v2;
        if (nvml.fabric_v(device, &v2) == nvml::SUCCESS) return fabric_from(v2);
    }
    if (nvml::GpuFabricInfo old{}; nvml.fabric && nvml.fabric(device, &old) == nvml::SUCCESS) return fabric_from(old);
    return std::nullopt;
}

std::string bus_id_of(const TopologyFunctions& nvml, nvml::Device device) {
    nvml::PciInfo info{};
    if (!nvml.pci_info || nvml.pci_info(device, &info) != nvml::SUCCESS) return {};
    return fmt::format("{:04x}:{:02x}:{:02x}.0", info.domain & 0xFFFF, info.bus & 0xFF, info.device & 0x1F);
}

PeerAccess peer_access_of(int status) {
    if (status < nvml::P2P_STATUS_OK || status > nvml::P2P_STATUS_UNKNOWN) return PeerAccess::unknown;
    return static_cast<PeerAccess>(status);  // PeerAccess follows nvmlGpuP2PStatus_t's order
}

// Reads and writes both: the first of them that is not ok.
PeerAccess read_peer_access(const TopologyFunctions& nvml, nvml::Device a, nvml::Device b) {
    if (!nvml.p2p_status) return PeerAccess::unknown;
    for (const int index : {nvml::p2p_caps_read, nvml::p2p_caps_write}) {
        int status = nvml::P2P_STATUS_UNKNOWN;
        if (nvml.p2p_status(a, b, index, &status) != nvml::SUCCESS) return PeerAccess::unknown;
        if (status != nvml::P2P_STATUS_OK) return peer_access_of(status);
    }
    return PeerAccess::ok;
}

LinkPath pcie_path(const TopologyFunctions& nvml, nvml::Device a, nvml::Device b) {
    int level = 0;
    if (!nvml.common_ancestor || nvml.common_ancestor(a, b, &level) != nvml::SUCCESS) return LinkPath::unknown;
    switch (level) {
        case nvml::TOPOLOGY_INTERNAL:  // two GPUs on one board count as one switch apart
        case nvml::TOPOLOGY_SINGLE: return LinkPath::pix;
        case nvml::TOPOLOGY_MULTIPLE: return LinkPath::pxb;
        case nvml::TOPOLOGY_HOSTBRIDGE: return LinkPath::phb;
        case nvml::TOPOLOGY_NODE: return LinkPath::node;
        case nvml::TOPOLOGY_SYSTEM: return LinkPath::sys;
        default: return LinkPath::unknown;
    }
}

unsigned links_between(const GpuLinks& from, const GpuLinks& to) {
    if (!to.address) return 0;
    return static_cast<unsigned>(std::count(from.ends.gpus.begin(), from.ends.gpus.end(), *to.address));
}

unsigned nvlinks_joining(const GpuLinks& a, const GpuLinks& b) {
    // Each end counts its own links; a link both see is counted once.
    const unsigned direct = std::max(links_between(a, b), links_between(b, a));
    const unsigned switched = std::min(a.ends.to_switch, b.ends.to_switch);
    return direct + switched;
}

}  // namespace

unsigned nvlink_generation_of(unsigned version_code) {
    switch (version_code) {
        case 1: return 1;
        case 2:
        case 3: return 2;
        case 4:
        case 5: return 3;
        case 6: return 4;
        case 7: return 5;
        default: return 0;
    }
}

void read_nvml_topology(const SharedLibrary& library, const std::vector<nvml::Device>& devices, NvmlReport& report,
                        const std::string& pci_devices) {
    TopologyFunctions nvml;
    nvml.load(library);
    // NVLinks matter only between GPUs: a host of one GPU skips their 36 calls.
    const bool peers = std::count_if(devices.begin(), devices.end(), [](nvml::Device d) { return d != nullptr; }) > 1;
    std::vector<GpuLinks> links(devices.size());
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t a = 0; a < devices.size(); ++a)
        for (std::size_t b = a + 1; b < devices.size(); ++b)
            if (devices[a] && devices[b]) pairs.emplace_back(a, b);
    // A pair's peer access is two driver calls of about 1.7 ms each (4 x H200):
    // read beside the GPUs' own links, spread over as many threads as GPUs,
    // rather than one pair after another once those are done (20 ms at four
    // GPUs, 95 at eight).
    std::vector<PeerAccess> access(pairs.size(), PeerAccess::unknown);
    std::vector<std::thread> readers;  // a GPU's links on a thread of its own, as its health
    for (std::size_t i = 0; i < devices.size() && i < report.gpus.size(); ++i) {
        if (!devices[i]) continue;
        readers.emplace_back([&, i] {
            Gpu& gpu = report.gpus[i].gpu;
            if (peers) links[i] = read_nvlinks(nvml, devices[i], gpu);
            gpu.pci_bus_id = bus_id_of(nvml, devices[i]);
            // The GPU's own registers through sysfs where it is there
            // (microseconds); NVML's current generation alone took 2.6-3.4 ms
            // a GPU on 2 x H200.
            gpu.pcie = read_nvidia_pcie_link(gpu.pci_bus_id, pci_devices);
            if (!gpu.pcie) gpu.pcie = read_pcie(nvml, devices[i]);
            gpu.fabric = read_fabric(nvml, devices[i]);
        });
    }
    const std::size_t pair_readers = std::min(pairs.size(), devices.size());
    for (std::size_t r = 0; r < pair_readers; ++r)
        readers.emplace_back([&, r] {
            for (std::size_t k = r; k < pairs.size(); k += pair_readers)
                access[k] = read_peer_access(nvml, devices[pairs[k].first], devices[pairs[k].second]);
        });
    for (auto& reader : readers) reader.join();
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const auto [a, b] = pairs[k];
        HostPair pair;
        pair.first = static_cast<int>(a);
        pair.second = static_cast<int>(b);
        pair.nvlinks = nvlinks_joining(links[a], links[b]);
        pair.path = pair.nvlinks > 0 ? LinkPath::nvlink : pcie_path(nvml, devices[a], devices[b]);
        pair.p2p = access[k];
        report.topology.add(pair);
    }
}

}  // namespace provision
