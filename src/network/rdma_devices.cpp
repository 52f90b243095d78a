#include "network/rdma_devices.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "network/interfaces.h"
#include "network/sysfs_files.h"

namespace provision::network {
namespace {

std::optional<int> whole_number(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// The port's IP interface: the netdev of its first GID (RoCE), else the
// device's network interface whose dev_port is this port's (IPoIB).
std::string netdev_of(const std::string& device_folder, int port) {
    const std::string ports = device_folder + "/ports/" + std::to_string(port);
    if (auto name = read_attribute(ports + "/gid_attrs/ndevs/0", 64); name && safe_file_name(*name)) return *name;
    const FolderEntries nets = list_folder(device_folder + "/device/net", 64);
    for (const std::string& net : nets.names) {
        const auto dev_port = read_number_attribute(device_folder + "/device/net/" + net + "/dev_port");
        if ((dev_port && *dev_port == port - 1) || (!dev_port && nets.names.size() == 1)) return net;
    }
    return "";
}

RdmaPort read_port(const std::string& device_folder, int number) {
    RdmaPort port;
    port.number = number;
    const std::string folder = device_folder + "/ports/" + std::to_string(number) + "/";
    port.state_text = read_attribute(folder + "state", 64).value_or("");
    port.state = port_state_of(port.state_text);
    port.phys_state = read_attribute(folder + "phys_state", 64).value_or("");
    port.rate_text = read_attribute(folder + "rate", 64).value_or("");
    port.rate_gbps = rate_of(port.rate_text);
    port.link_layer = link_layer_of(read_attribute(folder + "link_layer", 64).value_or(""));
    port.netdev = netdev_of(device_folder, number);
    return port;
}

// Whether the verbs node opens as ibv_open_device opens it (read and write).
void check_access(const std::string& dev, RdmaDevice& device) {
    if (device.verbs_node.empty()) {
        device.access = DeviceAccess::no_verbs_device;
        return;
    }
    const std::string node = dev + "/infiniband/" + device.verbs_node;
    if (::access(node.c_str(), F_OK) != 0) {
        device.access = DeviceAccess::no_verbs_node;
        device.access_detail = std::strerror(errno);
        return;
    }
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        device.access = DeviceAccess::cannot_open;
        device.access_detail = std::strerror(errno);
        return;
    }
    ::close(fd);
    device.access = DeviceAccess::usable;
}

}  // namespace

std::string_view to_string(PortState state) {
    switch (state) {
        case PortState::down: return "DOWN";
        case PortState::init: return "INIT";
        case PortState::armed: return "ARMED";
        case PortState::active: return "ACTIVE";
        case PortState::other: break;
    }
    return "unknown";
}

std::string_view to_string(LinkLayer layer) {
    switch (layer) {
        case LinkLayer::infiniband: return "InfiniBand";
        case LinkLayer::ethernet: return "Ethernet";
        case LinkLayer::other: break;
    }
    return "unknown";
}

std::string_view to_string(DeviceAccess access) {
    switch (access) {
        case DeviceAccess::usable: return "usable";
        case DeviceAccess::no_verbs_node: return "no-device-node";
        case DeviceAccess::cannot_open: return "cannot-open";
        case DeviceAccess::no_verbs_device: return "no-verbs";
    }
    return "no-verbs";
}

PortState port_state_of(std::string_view text) {
    // ib_port_state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.
    const auto number = whole_number(text.substr(0, text.find(':')));
    if (!number) return PortState::other;
    switch (*number) {
        case 1: return PortState::down;
        case 2: return PortState::init;
        case 3: return PortState::armed;
        case 4: return PortState::active;
        default: return PortState::other;
    }
}

LinkLayer link_layer_of(std::string_view text) {
    if (text == "InfiniBand") return LinkLayer::infiniband;
    if (text == "Ethernet") return LinkLayer::ethernet;
    return LinkLayer::other;
}

std::optional<double> rate_of(std::string_view text) {
    const std::size_t space = text.find(' ');
    if (space == std::string_view::npos || !text.substr(space).starts_with(" Gb/sec")) return std::nullopt;
    double rate = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + space, rate);
    if (ec != std::errc() || end != text.data() + space || !(rate > 0) || rate > 1e6) return std::nullopt;
    return rate;
}

RdmaReading read_rdma_devices(const std::string& sysfs, const std::string& dev,
                              const std::function<bool(const std::string&)>& named) {
    RdmaReading reading;
    const std::string root = sysfs + "/class/infiniband";
    const FolderEntries names = list_folder(root, kMostRdmaDevices, named);
    reading.devices_left_out = names.left_out;
    reading.listing_stopped = names.listing_stopped;
    for (const std::string& name : names.names) {
        if (!safe_file_name(name)) continue;
        RdmaDevice device;
        device.name = name;
        const std::string folder = root + "/" + name;
        device.pci_path = resolve_within(sysfs, folder + "/device").value_or("");
        const FolderEntries verbs = list_folder(folder + "/device/infiniband_verbs", 4);
        for (const std::string& node : verbs.names)
            if (node.rfind("uverbs", 0) == 0 && safe_file_name(node)) {
                device.verbs_node = node;
                break;
            }
        check_access(dev, device);
        const FolderEntries ports = list_folder(folder + "/ports", kMostRdmaPorts);
        device.ports_left_out = ports.left_out + (ports.listing_stopped ? 1 : 0);
        std::vector<int> numbers;
        for (const std::string& port : ports.names)
            if (const auto number = whole_number(port); number && *number > 0) numbers.push_back(*number);
        std::sort(numbers.begin(), numbers.end());
        for (const int number : numbers) device.ports.push_back(read_port(folder, number));
        reading.devices.push_back(std::move(device));
    }
    return reading;
}

void GidTableReader::read(const std::string& device, RdmaPort& port, std::size_t read_at_most) {
    const std::string folder =
        sysfs + "/class/infiniband/" + device + "/ports/" + std::to_string(port.number) + "/gids/";
    const FolderEntries entries = list_folder(folder, kMostGids);
    port.gids_truncated = entries.truncated();
    const std::size_t length = entries.names.size();
    std::size_t reads = std::min(length, read_at_most);
    if (reads > budget) {
        reads = budget;
        port.gids_truncated = true;
    }
    budget -= reads;
    port.gids.assign(length, std::nullopt);
    for (std::size_t i = 0; i < reads; ++i)
        if (const auto text = read_attribute(folder + std::to_string(i), 64)) port.gids[i] = parse_gid(*text);
}

std::optional<int> GidTableReader::roce_version(const std::string& device, int port, int index) const {
    const auto text = read_attribute(sysfs + "/class/infiniband/" + device + "/ports/" + std::to_string(port) +
                                         "/gid_attrs/types/" + std::to_string(index),
                                     32);
    return text ? roce_version_of(*text) : std::nullopt;
}

}  // namespace provision::network
