// Fuzz target: the network stage's readers of what a container's /sys,
// /dev and the interface list hold (src/network/), on one stand-in tree a
// process.  The input is up to ten lines, the last taking the rest:
//   0-4  an RDMA port's state, phys_state, rate, link_layer and netdev
//   5    its GID table, entries separated by ';' (at most 64)
//   6    the RoCE versions of the entries, separated by ';'
//   7    NCCL_IB_HCA, also read as NCCL_SOCKET_IFNAME
//   8    NCCL_IB_GID_INDEX, NCCL_IB_ADDR_RANGE (a space between)
//   9    the rest: a bridge's configuration space, and an interface list
// Beyond "no crash, no sanitizer report" it checks every bound the readers
// promise (ports, GIDs, interfaces, NCCL's sixteen), that a GID index NCCL
// would pick lies in the table, that ACS is unknown where the extended space
// is missing, and that no finding's words carry a control character.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>

#include "fuzz/fuzz_support.h"
#include "fuzz/version_target.h"
#include "network/nccl_name_list.h"
#include "network/network_stage.h"
#include "network/pci_topology.h"
#include "recipe/recipe.h"

namespace fuzz::network_sysfs {

namespace fs = std::filesystem;

// A stand-in machine of this process's own, removed when the process ends.
class Tree {
public:
    Tree() : root_(fs::temp_directory_path() / ("provision-fuzz-network-" + std::to_string(::getpid()))) {
        fs::remove_all(root_);
        const fs::path pci = root_ / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0";
        fs::create_directories(pci / "infiniband_verbs/uverbs0");
        fs::create_directories(root_ / "sys/class/infiniband/mlx5_0/ports/1/gids");
        fs::create_directories(root_ / "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types");
        fs::create_directories(root_ / "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs");
        fs::create_directory_symlink(fs::relative(pci, root_ / "sys/class/infiniband/mlx5_0"),
                                     root_ / "sys/class/infiniband/mlx5_0/device");
        fs::create_directories(root_ / "sys/bus/pci/devices");
        fs::create_directory_symlink(fs::relative(pci.parent_path(), root_ / "sys/bus/pci/devices"),
                                     root_ / "sys/bus/pci/devices/0000:02:10.0");
        fs::create_directories(root_ / "dev/infiniband");
        write("dev/infiniband/uverbs0", "");
    }
    ~Tree() {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }
    Tree(const Tree&) = delete;
    Tree& operator=(const Tree&) = delete;

    std::string path(const std::string& relative = "") const { return (root_ / relative).string(); }
    void write(const std::string& relative, std::string_view text) const {
        std::ofstream(root_ / relative, std::ios::binary | std::ios::trunc)
            .write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    // Replaces the GID table (and its types) with `count` entries.
    void clear_gids() const {
        for (const char* folder : {"gids", "gid_attrs/types"}) {
            const fs::path path = root_ / "sys/class/infiniband/mlx5_0/ports/1" / folder;
            std::error_code ignored;
            fs::remove_all(path, ignored);
            fs::create_directories(path);
        }
    }

private:
    fs::path root_;
};

inline std::vector<std::string_view> split(std::string_view text, char separator, std::size_t most) {
    std::vector<std::string_view> parts;
    while (!text.empty() && parts.size() < most) {
        const std::size_t at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) break;
        text.remove_prefix(at + 1);
    }
    return parts;
}

inline const provision::HealthPolicy& policy() {
    static const provision::HealthPolicy policy;  // every signal "degraded": the words are what is checked
    return policy;
}

inline void one_input(std::string_view input) {
    static const Tree tree;
    const auto lines = fuzz::version::split_lines(input, 10);
    auto line = [&](std::size_t i) { return i < lines.size() ? lines[i] : std::string_view(); };
    const std::string port = "sys/class/infiniband/mlx5_0/ports/1/";
    tree.write(port + "state", line(0));
    tree.write(port + "phys_state", line(1));
    tree.write(port + "rate", line(2));
    tree.write(port + "link_layer", line(3));
    tree.write(port + "gid_attrs/ndevs/0", line(4));
    tree.clear_gids();
    const auto gids = split(line(5), ';', 64);
    const auto types = split(line(6), ';', 64);
    for (std::size_t i = 0; i < gids.size(); ++i) tree.write(port + "gids/" + std::to_string(i), gids[i]);
    for (std::size_t i = 0; i < types.size() && i < gids.size(); ++i)
        tree.write(port + "gid_attrs/types/" + std::to_string(i), types[i]);
    tree.write("sys/bus/pci/devices/0000:02:10.0/config", line(9));
    tree.write("interfaces", line(9));

    using namespace provision::network;
    NetworkSettings settings;
    settings.scope = NetworkScope::job;
    settings.job.nodes = 2;
    settings.job.master_addr = "10.0.0.1";
    settings.roots.sysfs = tree.path("sys");
    settings.roots.dev = tree.path("dev");
    settings.roots.proc = tree.path("proc");
    settings.roots.interfaces_file = tree.path("interfaces");
    settings.roots.route_local = "10.0.0.5";
    settings.roots.ibverbs_library = tree.path("no-libibverbs.so.1");  // never a real library while fuzzing
    settings.nccl.ib_hca = std::string(line(7));
    settings.nccl.socket.socket_ifname = std::string(line(7));
    const auto gid_words = split(line(8), ' ', 2);
    if (!gid_words.empty()) settings.nccl.gid.gid_index = std::string(gid_words[0]);
    if (gid_words.size() > 1) settings.nccl.gid.addr_range = std::string(gid_words[1]);

    NetworkReport report = read_network(settings);
    provision::Inventory inventory;
    judge_network(report, inventory, policy(), settings);

    FUZZ_CHECK(report.rdma.devices.size() == 1);
    const RdmaDevice& device = report.rdma.devices[0];
    FUZZ_CHECK(device.ports.size() == 1);
    const RdmaPort& read_port = device.ports[0];
    if (read_port.rate_gbps) FUZZ_CHECK(*read_port.rate_gbps > 0 && *read_port.rate_gbps <= 1e6);
    FUZZ_CHECK(read_port.gids.size() <= kMostGids);
    if (read_port.gid && !read_port.gid->from_user)
        FUZZ_CHECK(read_port.gid->index >= 0 &&
                   (read_port.gids.empty() || read_port.gid->index < static_cast<int>(read_port.gids.size())));
    FUZZ_CHECK(report.taken.size() <= 1);
    FUZZ_CHECK(report.interface_list.entries.size() <= 2 * kMostInterfaceEntries);
    FUZZ_CHECK(report.interface_list.error.empty() || report.interface_list.entries.empty());
    FUZZ_CHECK(report.socket.interfaces.size() <= static_cast<std::size_t>(kNcclMaxInterfaces));
    std::set<std::string> names;
    for (const auto& chosen : report.socket.interfaces) {
        FUZZ_CHECK(chosen.address.family != Family::other);
        FUZZ_CHECK(names.insert(chosen.name).second);
    }
    FUZZ_CHECK(parse_nccl_name_list(line(7), kNcclMaxIbDevices).entries.size() <=
               static_cast<std::size_t>(kNcclMaxIbDevices));
    if (line(9).size() < 0x104) FUZZ_CHECK(acs_redirect_of(line(9)) == AcsRedirect::unknown);
    for (const auto& finding : report.findings) FUZZ_CHECK(fuzz::printable_as_is(finding.words));
    for (const auto& [name, value] : report.write) {
        FUZZ_CHECK(name == "NCCL_SOCKET_IFNAME");
        FUZZ_CHECK(fuzz::printable_as_is(value));
    }
}

}  // namespace fuzz::network_sysfs
