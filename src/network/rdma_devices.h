// The host's RDMA devices as sysfs lists them (/sys/class/infiniband/<dev>:
// each port's state, phys_state, rate, link_layer, its netdev; the
// device's PCI path), and whether this container can open each one's verbs
// node under /dev/infiniband, which NCCL's ibv_open_device needs
// (NVIDIA/nccl src/transport/net_ib/init.cc ncclIbInitDevices: "NET/IB :
// Unable to open device"; rdma-core leaves a device whose node is missing
// out of ibv_get_device_list altogether).  Bounded: at most kMostRdmaDevices
// devices, kMostRdmaPorts ports each, kMostGids GIDs a port and
// kGidReadBudget GID entries in all.  Past a bound the devices read are the
// ones NCCL meets first (ibv_get_device_list's order: by name, naturally,
// mlx5_2 before mlx5_10; an SR-IOV host lists one a virtual function) and
// those NCCL_IB_HCA names; the ports, the lowest numbers.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "network/gid_index.h"

namespace provision::network {

enum class PortState { down, init, armed, active, other };       // "1: DOWN" ... "4: ACTIVE"
enum class LinkLayer { infiniband, ethernet, other };             // "InfiniBand", "Ethernet"
enum class DeviceAccess { usable, no_verbs_node, cannot_open, no_verbs_device };

std::string_view to_string(PortState state);
std::string_view to_string(LinkLayer layer);
std::string_view to_string(DeviceAccess access);

struct RdmaPort {
    int number = 0;
    PortState state = PortState::other;
    std::string state_text;        // "4: ACTIVE"
    std::string phys_state;        // "5: LinkUp"
    std::optional<double> rate_gbps;
    std::string rate_text;         // "400 Gb/sec (4X NDR)"
    LinkLayer link_layer = LinkLayer::other;
    std::string netdev;            // the IP interface of the port ("ib0", "eth2"), where sysfs names one
    // Read only for the ports NCCL takes (read_gid_tables):
    std::vector<std::optional<Gid>> gids;
    bool gids_truncated = false;
    std::optional<GidChoice> gid;
};

struct RdmaDevice {
    std::string name;              // "mlx5_0"
    std::string pci_path;          // "/devices/pci0000:00/0000:00:01.0/.../0000:3b:00.0" within sysfs; "" unknown
    std::string verbs_node;        // "uverbs0"
    DeviceAccess access = DeviceAccess::no_verbs_device;
    std::string access_detail;     // strerror of the open
    std::vector<RdmaPort> ports;
    std::size_t ports_left_out = 0;  // past kMostRdmaPorts: not read
};

struct RdmaReading {
    std::vector<RdmaDevice> devices;  // in natural order of their names
    std::size_t devices_left_out = 0;  // past kMostRdmaDevices: not read
    bool listing_stopped = false;      // so many that not all were even counted
};

constexpr std::size_t kMostRdmaDevices = 64;
constexpr std::size_t kMostRdmaPorts = 32;
constexpr std::size_t kMostGids = 1024;
constexpr std::size_t kGidReadBudget = 8192;

// `sysfs`: where /sys is; `dev`: where /dev is; `named`: the devices the
// user's NCCL_IB_HCA names, read past the bound too (at most kMostRdmaDevices).
RdmaReading read_rdma_devices(const std::string& sysfs, const std::string& dev,
                              const std::function<bool(const std::string&)>& named = {});

// Reads the GID tables of the ports `wanted(device, port)` names, within
// kGidReadBudget entries in all, and leaves each port's RoCE version
// reader to nccl_gid_choice.
struct GidTableReader {
    std::string sysfs;
    std::size_t budget = kGidReadBudget;
    // The table of one port: its length is the entries sysfs lists, of
    // which the first `read_at_most` are read (the rest, and entries that
    // cannot be read, are nullopt).
    void read(const std::string& device, RdmaPort& port, std::size_t read_at_most = kMostGids);
    std::optional<int> roce_version(const std::string& device, int port, int index) const;
};

// "4: ACTIVE" -> active; "400 Gb/sec (4X NDR)" -> 400.
PortState port_state_of(std::string_view text);
LinkLayer link_layer_of(std::string_view text);
std::optional<double> rate_of(std::string_view text);

}  // namespace provision::network
