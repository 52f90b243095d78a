// Stand-in machines for the network stage's tests: a sysfs tree (PCI
// devices under root complexes, RDMA devices and their ports and GIDs,
// network interfaces, the peer-memory modules), a /dev with verbs nodes, a
// /proc with the kernel's release and NVIDIA's module, and an interface list
// in the stand-in's format.  Everything lives in one temporary folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "network/network_stage.h"
#include "test_support.h"

namespace network_test {

namespace fs = std::filesystem;

struct PortSpec {
    int number = 1;
    std::string state = "4: ACTIVE";
    std::string link_layer = "InfiniBand";
    std::string rate = "400 Gb/sec (4X NDR)";
    std::string phys_state = "5: LinkUp";
    std::vector<std::string> gids;   // sysfs' form; index = position
    std::vector<std::string> types;  // "RoCE v2", "IB/RoCE v1"; "" writes no file
    std::string netdev;              // gid_attrs/ndevs/0
};

// A GID as sysfs writes it: "fe80:0000:...".
inline std::string gid_text(const std::string& groups) { return groups; }
constexpr const char* kLinkLocalGid = "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f";
constexpr const char* kUnsetGid = "0000:0000:0000:0000:0000:0000:0000:0000";
inline std::string ipv4_gid(int a, int b, int c, int d) {
    char text[48];
    std::snprintf(text, sizeof text, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a, b, c, d);
    return text;
}

class StandIn {
public:
    std::string sysfs() const { return dir_.path() + "/sys"; }
    std::string dev() const { return dir_.path() + "/dev"; }
    std::string proc() const { return dir_.path() + "/proc"; }
    std::string interfaces_file() const { return dir_.path() + "/interfaces"; }
    std::string path() const { return dir_.path(); }

    // A PCI function at sys/devices/<root>/<chain...>; its bus id (the
    // chain's last) gets sys/bus/pci/devices/<bus id> as a link.  Returns
    // the path within sysfs ("/devices/pci0000:00/...").
    std::string pci(const std::vector<std::string>& chain, const std::string& root = "pci0000:00", int numa = 0) {
        std::string relative = "/devices/" + root;
        write(sysfs() + relative + "/numa_node", "-1\n");
        for (const std::string& bus_id : chain) {
            relative += "/" + bus_id;
            write(sysfs() + relative + "/numa_node", std::to_string(numa) + "\n");
            const fs::path link = sysfs() + "/bus/pci/devices/" + bus_id;
            fs::create_directories(link.parent_path());
            std::error_code ignored;
            fs::remove(link, ignored);
            fs::create_directory_symlink(fs::relative(sysfs() + relative, link.parent_path()), link);
        }
        return relative;
    }

    // The vendor, device and subsystem ids of a bus id (for a BCM switch).
    void pci_ids(const std::string& bus_id, const std::string& vendor, const std::string& device,
                 const std::string& sub_vendor, const std::string& sub_device) {
        const std::string folder = sysfs() + "/bus/pci/devices/" + bus_id + "/";
        write(folder + "vendor", vendor + "\n");
        write(folder + "device", device + "\n");
        write(folder + "subsystem_vendor", sub_vendor + "\n");
        write(folder + "subsystem_device", sub_device + "\n");
    }

    // A bridge's configuration space with an ACS capability at 0x100 whose
    // control register holds `control`.
    void acs(const std::string& bus_id, unsigned control) {
        std::string config(4096, '\0');
        const unsigned header = 0x000d | (1u << 16);  // ACS, version 1, no next capability
        for (int i = 0; i < 4; ++i) config[0x100 + i] = static_cast<char>((header >> (8 * i)) & 0xff);
        config[0x106] = static_cast<char>(control & 0xff);
        config[0x107] = static_cast<char>((control >> 8) & 0xff);
        write(sysfs() + "/bus/pci/devices/" + bus_id + "/config", config);
    }

    // An RDMA device on the PCI function at `pci_path` (from pci()), with
    // its verbs node in /dev unless `node` is false.
    void rdma(const std::string& name, const std::string& pci_path, const std::vector<PortSpec>& ports,
              int verbs = 0, bool node = true) {
        const std::string folder = sysfs() + "/class/infiniband/" + name;
        fs::create_directories(folder);
        std::error_code ignored;
        fs::remove(folder + "/device", ignored);
        fs::create_directory_symlink(fs::relative(sysfs() + pci_path, folder), folder + "/device");
        const std::string uverbs = "uverbs" + std::to_string(verbs);
        fs::create_directories(sysfs() + pci_path + "/infiniband_verbs/" + uverbs);
        if (node) write(dev() + "/infiniband/" + uverbs, "");
        for (const PortSpec& port : ports) {
            const std::string p = folder + "/ports/" + std::to_string(port.number) + "/";
            write(p + "state", port.state + "\n");
            write(p + "phys_state", port.phys_state + "\n");
            write(p + "rate", port.rate + "\n");
            write(p + "link_layer", port.link_layer + "\n");
            fs::create_directories(p + "gids");
            for (std::size_t i = 0; i < port.gids.size(); ++i) write(p + "gids/" + std::to_string(i), port.gids[i] + "\n");
            for (std::size_t i = 0; i < port.types.size(); ++i)
                if (!port.types[i].empty()) write(p + "gid_attrs/types/" + std::to_string(i), port.types[i] + "\n");
            if (!port.netdev.empty()) write(p + "gid_attrs/ndevs/0", port.netdev + "\n");
        }
    }

    void interface_state(const std::string& name, const std::string& operstate, int mtu, int speed) {
        const std::string folder = sysfs() + "/class/net/" + name + "/";
        write(folder + "operstate", operstate + "\n");
        write(folder + "mtu", std::to_string(mtu) + "\n");
        write(folder + "speed", std::to_string(speed) + "\n");
    }

    void peer_memory(const std::string& relative) { write(sysfs() + relative, "1.0\n"); }
    void kernel(const std::string& release) { write(proc() + "/sys/kernel/osrelease", release + "\n"); }
    void nvidia_module(bool open) {
        write(proc() + "/driver/nvidia/version",
              open ? "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n"
                   : "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025\n");
    }
    void interfaces(const std::string& text) { write(interfaces_file(), text); }

    provision::network::NetworkRoots roots() const {
        provision::network::NetworkRoots roots;
        roots.sysfs = sysfs();
        roots.dev = dev();
        roots.proc = proc();
        roots.interfaces_file = interfaces_file();
        return roots;
    }

    static void write(const std::string& path, const std::string& contents) { test_support::write_file(path, contents); }

private:
    test_support::TempDir dir_;
};

}  // namespace network_test
