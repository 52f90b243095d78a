// The PCI path between a GPU and a NIC as NCCL's topology sees it, from
// their sysfs paths (realpath of /sys/bus/pci/devices/<bus id>):
//   NVIDIA/nccl src/graph/xml.cc ncclTopoGetXmlFromSys: a device's parent
//   is found by going up two path components at a time (a PCI switch is an
//   upstream and a downstream port): the upstream port two levels up is a
//   "pci" node, and reaching a component that is no bus id (the root
//   "pci0000:00") makes the parent the CPU of the node's numa_node;
//   src/graph/topo.cc ncclTopoFlattenBcmSwitches: a Broadcom PEX switch
//   (getBcmGen) showing itself as two levels is one;
//   src/graph/paths.cc ncclTopoSetPaths: a link between two PCI switches
//   makes the path PXB, one through a CPU PHB, between CPUs SYS; else PIX;
//   paths.cc ncclTopoCheckGdr: GPUDirect RDMA only where the GPU-NIC path
//   is no worse than NCCL_NET_GDR_LEVEL (default P2C with NCCL_NET_GDR_C2C,
//   which PCIe paths reach only up to PXB; PXB with NCCL_NET_GDR_C2C=0),
//   read by ncclGetLevel: a path name, or an old number 0-5.
// And whether a bridge between them redirects peer traffic (PCIe ACS
// Request or Completion Redirect), from its extended configuration space.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

// NCCL's path types, best first (src/graph/topo.h, topoPathTypeStr).
enum class PathType { loc, nvl, nvb, c2c, pix, pxb, p2c, pxn, phb, sys, net, dis };
std::string_view to_string(PathType type);

// NCCL_NET_GDR_LEVEL as ncclGetLevel reads it; nullopt: NCCL's default.
std::optional<PathType> parse_gdr_level(std::string_view text);
// The level in force: the variable's, else P2C (PXB where NCCL_NET_GDR_C2C is 0).
PathType gdr_level(const std::optional<std::string>& level, const std::optional<std::string>& gdr_c2c);

// "0000:3b:00.0": a PCI bus id as sysfs writes it (checkBDFFormat).
bool is_bus_id(std::string_view text);

// What the topology needs to know of a PCI function beyond its path.
struct PciFacts {
    // numa_node of the device at a sysfs path ("/devices/pci0000:00/..."), "-1" unknown.
    std::function<std::string(const std::string& path)> numa_node;
    // vendor << 48 | device << 32 | subsystem_vendor << 16 | subsystem_device of a bus id.
    std::function<std::optional<std::uint64_t>(const std::string& bus_id)> device_id;
};

struct PciPath {
    PathType type = PathType::sys;
    // The bridges between the two that NCCL's traffic crosses below their
    // common switch (empty for PHB and SYS): where ACS matters.
    std::vector<std::string> bridges;
};

// The path between two devices given by their sysfs paths.
PciPath nccl_pci_path(const std::string& gpu_path, const std::string& nic_path, const PciFacts& facts);

// ACS on a bridge, from its configuration space (`config`: the bytes of
// /sys/bus/pci/devices/<bus id>/config): on when its ACS Control register
// has P2P Request or Completion Redirect set, off when it does not or the
// bridge has no ACS capability, unknown where the extended space cannot be
// read (without CAP_SYS_ADMIN only the first 64 bytes are).
enum class AcsRedirect { off, on, unknown };
AcsRedirect acs_redirect_of(std::string_view config);

}  // namespace provision::network
