// NCCL's rules as the network stage reads them, each against the case in
// NVIDIA/nccl's source it follows: the name lists (utils.cc parseStringList,
// matchIfList), the socket interface (socket.cc ncclFindInterfaces), the GID
// index (net_ib/connect.cc ncclIbGetGidIndex), the GPU-NIC path
// (graph/xml.cc, topo.cc, paths.cc), ACS, and the job's shape from the
// launchers' variables.
#include <catch2/catch.hpp>

#include "network/gid_index.h"
#include "network/gpudirect.h"
#include "network/interfaces.h"
#include "network/job_shape.h"
#include "network/nccl_name_list.h"
#include "network/pci_topology.h"
#include "network/socket_interfaces.h"

using namespace provision::network;

namespace {

InterfaceList interfaces(const std::string& text) {
    InterfaceList list = parse_interface_stand_in(text);
    REQUIRE(list.error.empty());
    return list;
}

std::vector<std::string> names_of(const SocketChoice& choice) {
    std::vector<std::string> names;
    for (const auto& one : choice.interfaces) names.push_back(one.name);
    return names;
}

const char* kHost = R"(lo up,running,loopback 127.0.0.1/8
lo up,running,loopback ::1/128
docker0 up,running 172.17.0.1/16
eth0 up,running 10.0.0.5/24
eth0 up,running fe80::1/64
eth1 up,running 10.1.0.5/16
virbr0 up,running 192.168.122.1/24
eth2 up 10.2.0.5/24
)";

}  // namespace

TEST_CASE("NCCL's name lists: prefixes, ^ to leave out, = for exact names, ports", "[network][rules]") {
    const auto plain = parse_nccl_name_list("eth,ib", kNcclMaxInterfaces);
    CHECK(plain.takes("eth0"));
    CHECK(plain.takes("ib1"));
    CHECK_FALSE(plain.takes("enp1s0"));
    const auto exclude = parse_nccl_name_list("^docker,lo,virbr", kNcclMaxInterfaces);
    CHECK_FALSE(exclude.takes("docker0"));
    CHECK_FALSE(exclude.takes("lo"));
    CHECK(exclude.takes("eth0"));
    const auto exact = parse_nccl_name_list("=eth1", kNcclMaxInterfaces);
    CHECK(exact.takes("eth1"));
    CHECK_FALSE(exact.takes("eth10"));
    const auto exact_exclude = parse_nccl_name_list("^=mlx5_1", kNcclMaxIbDevices);
    CHECK_FALSE(exact_exclude.takes("mlx5_1", 1));
    CHECK(exact_exclude.takes("mlx5_10", 1));
    // "mlx5_0:1": port 1 of mlx5_0 only; a port that is no number reads as atoi's 0.
    const auto ports = parse_nccl_name_list("mlx5_0:1,mlx5_1:x", kNcclMaxIbDevices);
    CHECK(ports.takes("mlx5_0", 1));
    CHECK_FALSE(ports.takes("mlx5_0", 2));
    CHECK(ports.entries[1].port == 0);
    // Empty entries between commas are skipped (strtok_r); an empty list takes everything.
    CHECK(parse_nccl_name_list(",,eth,,", 16).entries.size() == 1);
    CHECK(parse_nccl_name_list("", 16).takes("anything"));
    CHECK_FALSE(parse_nccl_name_list("^", 16).takes("anything"));
    // At most MAX_IFS entries, each name cut to netIf.prefix's 63 bytes.
    std::string many;
    for (int i = 0; i < 100; ++i) many += "e" + std::to_string(i) + ",";
    CHECK(parse_nccl_name_list(many, kNcclMaxInterfaces).entries.size() == 16);
    CHECK(parse_nccl_name_list(std::string(200, 'x'), 16).entries[0].prefix.size() == 63);
}

TEST_CASE("ncclFindInterfaces: by default ib first, then all but docker, lo and virbr", "[network][rules]") {
    const auto list = interfaces(kHost);
    const auto choice = choose_socket_interfaces(list, {});
    CHECK(choice.rule == SocketRule::not_docker_lo_virbr);
    // eth2 is not running; eth0 once although it has two addresses; the IPv4 address first.
    CHECK(names_of(choice) == std::vector<std::string>{"eth0", "eth1"});
    CHECK(choice.interfaces[0].address.str() == "10.0.0.5");
    REQUIRE(choice.bootstrap);
    CHECK(choice.bootstrap->name == "eth0");

    const auto with_ib = interfaces(std::string(kHost) + "ib0 up,running 192.168.1.5/24\n");
    CHECK(names_of(choose_socket_interfaces(with_ib, {})) == std::vector<std::string>{"ib0"});
    CHECK(choose_socket_interfaces(with_ib, {}).rule == SocketRule::ib);

    // Then docker, then lo, then virbr, each only where nothing before it was found.
    const auto docker_lo = interfaces("lo up,running,loopback 127.0.0.1/8\ndocker0 up,running 172.17.0.1/16\n");
    CHECK(choose_socket_interfaces(docker_lo, {}).rule == SocketRule::docker);
    const auto only_lo = interfaces("lo up,running,loopback 127.0.0.1/8\nlo up,running,loopback ::1/128\n");
    const auto lo_choice = choose_socket_interfaces(only_lo, {});
    CHECK(lo_choice.rule == SocketRule::lo);
    CHECK(lo_choice.interfaces.size() == 1);  // IPv6 loopback is never taken
    CHECK(choose_socket_interfaces(interfaces("eth0 up 10.0.0.5/24\n"), {}).rule == SocketRule::none);
}

TEST_CASE("ncclFindInterfaces: NCCL_SOCKET_IFNAME decides alone, NCCL_SOCKET_FAMILY filters", "[network][rules]") {
    const auto list = interfaces(kHost);
    NcclSocketVariables variables;
    variables.socket_ifname = "eth1";
    auto choice = choose_socket_interfaces(list, variables);
    CHECK(choice.rule == SocketRule::socket_ifname);
    CHECK(names_of(choice) == std::vector<std::string>{"eth1"});
    variables.socket_ifname = "^eth";
    CHECK(names_of(choose_socket_interfaces(list, variables)) ==
          std::vector<std::string>{"lo", "docker0", "virbr0"});
    variables.socket_ifname = "=eth";  // exact: no interface is called "eth"
    CHECK(choose_socket_interfaces(list, variables).interfaces.empty());
    variables.socket_ifname = "e";  // one character: NCCL ignores it
    CHECK(choose_socket_interfaces(list, variables).rule == SocketRule::not_docker_lo_virbr);
    CHECK_FALSE(effective_socket_ifname(variables));

    NcclSocketVariables family;
    family.socket_family = "AF_INET6";
    const auto v6 = choose_socket_interfaces(list, family);
    CHECK(names_of(v6) == std::vector<std::string>{"eth0"});
    CHECK(v6.interfaces[0].address.str() == "fe80::1");
    family.socket_family = "inet6";  // not one of NCCL's two words: either family
    CHECK(names_of(choose_socket_interfaces(list, family)) == std::vector<std::string>{"eth0", "eth1"});
}

TEST_CASE("ncclFindInterfaces: the interface in NCCL_COMM_ID's subnet comes after ib", "[network][rules]") {
    const auto list = interfaces(kHost);
    NcclSocketVariables variables;
    variables.comm_id = "10.1.200.7:29500";
    const auto choice = choose_socket_interfaces(list, variables);
    CHECK(choice.rule == SocketRule::comm_id_subnet);
    CHECK(names_of(choice) == std::vector<std::string>{"eth1"});
    REQUIRE(choice.bootstrap);  // bootstrapNetInit: the subnet's interface too
    CHECK(choice.bootstrap->name == "eth1");
    variables.comm_id = "[fe80::99]:29500";
    CHECK(comm_id_address(*variables.comm_id)->str() == "fe80::99");
    variables.comm_id = "master-0:29500";  // a host name: not resolved here, said so
    const auto named = choose_socket_interfaces(list, variables);
    CHECK(named.rule == SocketRule::not_docker_lo_virbr);
    CHECK(named.notes.size() == 1);
    CHECK_FALSE(named.bootstrap);
}

TEST_CASE("ncclFindInterfaces: at most 16 interfaces, in getifaddrs' order", "[network][rules]") {
    std::string text;
    for (int i = 0; i < 40; ++i)
        text += "eth" + std::to_string(i) + " up,running 10.0." + std::to_string(i) + ".1/24\n";
    const auto choice = choose_socket_interfaces(interfaces(text), {});
    REQUIRE(choice.interfaces.size() == 16);
    CHECK(choice.interfaces[15].name == "eth15");
}

TEST_CASE("the interface stand-in: flags, addresses, escapes and errors with their line", "[network][rules]") {
    const auto list = interfaces("# a comment\n\neth\\x1b0 up,running 10.0.0.5/24\nib0 -\n");
    REQUIRE(list.entries.size() == 2);
    CHECK(list.entries[0].name == "eth\x1b" "0");
    CHECK(list.entries[1].address.family == Family::other);
    CHECK(parse_interface_stand_in("eth0 up,fast 10.0.0.1/24\n").error ==
          "line 1: unknown flag 'fast' (up, running, loopback)");
    CHECK(parse_interface_stand_in("\neth0 up 10.0.0.1/40\n").error == "line 2: '10.0.0.1/40' is no ADDRESS/PREFIX");
    CHECK(parse_interface_stand_in("eth\\x1 up\n").error == "line 1: a \\ in the name must start \\xNN");
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "veth" + std::to_string(i) + " up,running\n";
    const auto capped = parse_interface_stand_in(many);
    CHECK(capped.left_out == 5000 - kMostInterfaceEntries);
    CHECK(capped.entries.size() == kMostInterfaceEntries);
    // An SR-IOV host: getifaddrs lists every link before any address; the
    // addresses are kept whatever number of links precede them.
    many += "eth0 up,running 10.0.0.5/24\n";
    const auto addressed = parse_interface_stand_in(many);
    REQUIRE(addressed.entries.size() == kMostInterfaceEntries + 1);
    CHECK(addressed.entries.back().name == "eth0");
    CHECK(addressed.entries.front().name == "veth0");
}

TEST_CASE("ncclIbGetGidIndex on InfiniBand: the routable FLID's index, else 0", "[network][rules]") {
    const auto unused = [](int) -> std::optional<int> { return std::nullopt; };
    std::vector<std::optional<Gid>> table{parse_gid("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f"),
                                          parse_gid("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f")};
    CHECK(nccl_gid_choice(true, table, unused, {}).index == 0);
    table[1] = parse_gid("fe80:0000:0012:0000:0a1b:2cff:fe3d:4e5f");  // FLID 0x0012
    CHECK(nccl_gid_choice(true, table, unused, {}).index == 1);
    GidVariables variables;
    variables.routable_flid_index = "5";  // past the table: 0
    CHECK(nccl_gid_choice(true, table, unused, variables).index == 0);
}

TEST_CASE("ncclIbGetGidIndex on RoCE: an IPv4 RoCE v2 GID, never a link-local one", "[network][rules]") {
    // The table mlx5 shows with one IPv4 address: v1 and v2 link-local, v1 and v2 IPv4.
    std::vector<std::optional<Gid>> table{parse_gid("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f"),
                                          parse_gid("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f"),
                                          parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0005"),
                                          parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0005")};
    const std::vector<int> versions{1, 2, 1, 2};
    int reads = 0;
    const auto version = [&](int index) -> std::optional<int> {
        ++reads;
        return versions[static_cast<std::size_t>(index)];
    };
    const auto choice = nccl_gid_choice(false, table, version, {});
    CHECK(choice.index == 3);
    CHECK(choice.roce_version == 2);
    CHECK(gid_words(*choice.gid) == "::ffff:10.0.0.5");
    CHECK(reads <= 2 * static_cast<int>(table.size()));  // each entry's version read once at most
    GidVariables v1;
    v1.roce_version = "1";
    CHECK(nccl_gid_choice(false, table, version, v1).index == 2);
    GidVariables user;
    user.gid_index = "1";
    const auto chosen = nccl_gid_choice(false, table, version, user);
    CHECK(chosen.index == 1);
    CHECK(chosen.from_user);
    // Only link-local entries: NCCL stays on index 0, which is no usable GID.
    const auto local = nccl_gid_choice(false, {table[0], table[1]}, version, {});
    CHECK(local.index == 0);
    CHECK_FALSE(gid_valid(*local.gid));
    CHECK(gid_link_local(*local.gid));
    // An address range leaves the other subnet's GID out.
    GidVariables range;
    range.addr_range = "10.9.0.0/16";
    CHECK(nccl_gid_choice(false, table, version, range).index == 0);
    range.addr_range = "10.0.0.0/16";
    CHECK(nccl_gid_choice(false, table, version, range).index == 3);
    // Unknown versions (EINVAL in containers): nothing better than a valid IPv4 GID of another family.
    const auto unknown = nccl_gid_choice(false, table, [](int) -> std::optional<int> { return std::nullopt; }, {});
    CHECK(unknown.index == 2);
}

TEST_CASE("GIDs as sysfs writes them", "[network][rules]") {
    CHECK_FALSE(parse_gid("fe80::1"));
    CHECK_FALSE(parse_gid("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5g"));
    const auto unset = parse_gid("0000:0000:0000:0000:0000:0000:0000:0000");
    REQUIRE(unset);
    CHECK_FALSE(gid_configured(*unset));
    CHECK(gid_is_ipv4(*parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0005")));
    CHECK_FALSE(gid_is_ipv4(*parse_gid("2001:0db8:0000:0000:0000:0000:0000:0001")));
    CHECK(roce_version_of("RoCE v2") == 2);
    CHECK(roce_version_of("IB/RoCE v1") == 1);
    CHECK_FALSE(roce_version_of("RoCE v3"));
}

TEST_CASE("the GPU-NIC path as NCCL's topology sees it: PIX, PXB, PHB, SYS", "[network][rules]") {
    PciFacts facts;
    facts.numa_node = [](const std::string& path) { return path.find("pci0000:80") != std::string::npos ? "1" : "0"; };
    const std::string root = "/devices/pci0000:00/0000:00:01.0";
    // One switch (upstream 01:00.0, downstream ports 02:xx) above both: PIX.
    const auto pix = nccl_pci_path(root + "/0000:01:00.0/0000:02:08.0/0000:03:00.0",
                                   root + "/0000:01:00.0/0000:02:10.0/0000:04:00.0", facts);
    CHECK(pix.type == PathType::pix);
    CHECK(pix.bridges == std::vector<std::string>{"0000:02:08.0", "0000:02:10.0"});
    // A second switch below the first on the GPU's side: PXB.
    const auto pxb = nccl_pci_path(root + "/0000:01:00.0/0000:02:08.0/0000:05:00.0/0000:06:00.0/0000:07:00.0",
                                   root + "/0000:01:00.0/0000:02:10.0/0000:04:00.0", facts);
    CHECK(pxb.type == PathType::pxb);
    CHECK(pxb.bridges.size() == 4);
    // Different switches under one CPU: PHB; under CPUs of two NUMA nodes: SYS.
    CHECK(nccl_pci_path(root + "/0000:01:00.0/0000:02:08.0/0000:03:00.0",
                        "/devices/pci0000:00/0000:00:02.0/0000:11:00.0/0000:12:00.0/0000:13:00.0", facts)
              .type == PathType::phb);
    CHECK(nccl_pci_path(root + "/0000:01:00.0/0000:02:08.0/0000:03:00.0",
                        "/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0", facts)
              .type == PathType::sys);
    // A device right under its root port has the CPU as parent.
    CHECK(nccl_pci_path(root + "/0000:03:00.0", root + "/0000:04:00.0", facts).type == PathType::phb);
}

TEST_CASE("a Broadcom Gen4 switch that shows two levels is one (ncclTopoFlattenBcmSwitches)", "[network][rules]") {
    PciFacts facts;
    facts.numa_node = [](const std::string&) { return "0"; };
    facts.device_id = [](const std::string& bus_id) -> std::optional<std::uint64_t> {
        if (bus_id == "0000:01:00.0" || bus_id == "0000:05:00.0" || bus_id == "0000:15:00.0")
            return 0x1000c0101000a000ull;  // getBcmGen 4, either level
        return std::nullopt;
    };
    const std::string root = "/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    const std::string gpu = root + "/0000:02:08.0/0000:05:00.0/0000:06:00.0/0000:07:00.0";
    const std::string nic = root + "/0000:02:10.0/0000:15:00.0/0000:16:00.0/0000:17:00.0";
    CHECK(nccl_pci_path(gpu, nic, facts).type == PathType::pix);
    facts.device_id = nullptr;
    CHECK(nccl_pci_path(gpu, nic, facts).type == PathType::pxb);
}

TEST_CASE("NCCL_NET_GDR_LEVEL as ncclGetLevel reads it", "[network][rules]") {
    CHECK(parse_gdr_level("PHB") == PathType::phb);
    CHECK(parse_gdr_level("2") == PathType::pxb);   // old numbering: LOC PIX PXB PHB SYS SYS
    CHECK(parse_gdr_level("9") == PathType::sys);
    CHECK_FALSE(parse_gdr_level("phb"));           // strcmp: case matters
    CHECK(gdr_level(std::nullopt, std::nullopt) == PathType::p2c);
    CHECK(gdr_level(std::nullopt, std::string("0")) == PathType::pxb);
    CHECK(gdr_level(std::string("SYS"), std::nullopt) == PathType::sys);
    // PCIe paths within PXB pass the default level; through the CPU they do not.
    CHECK(PathType::pxb <= gdr_level(std::nullopt, std::nullopt));
    CHECK(PathType::phb > gdr_level(std::nullopt, std::nullopt));
    CHECK(is_bus_id("0000:3b:00.0"));
    CHECK_FALSE(is_bus_id("pci0000:00"));
}

TEST_CASE("ACS redirection from a bridge's configuration space", "[network][rules]") {
    std::string config(4096, '\0');
    auto put = [&](std::size_t at, unsigned value) {
        for (int i = 0; i < 4; ++i)
            config[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
    };
    CHECK(acs_redirect_of(config) == AcsRedirect::off);  // no extended capability
    // AER at 0x100 pointing to ACS at 0x148 with Request Redirect on.
    put(0x100, 0x0001 | (1u << 16) | (0x148u << 20));
    put(0x148, 0x000d | (1u << 16));
    put(0x14c, 0x0004u << 16);
    CHECK(acs_redirect_of(config) == AcsRedirect::on);
    put(0x14c, 0x0001u << 16);  // Source Validation alone
    CHECK(acs_redirect_of(config) == AcsRedirect::off);
    CHECK(acs_redirect_of(config.substr(0, 64)) == AcsRedirect::unknown);  // without CAP_SYS_ADMIN
    // A capability pointing at itself: the walk ends, unknown.
    put(0x148, 0x0001 | (0x148u << 20));
    CHECK(acs_redirect_of(config) == AcsRedirect::unknown);
    put(0x100, 0xffffffffu);
    CHECK(acs_redirect_of(config) == AcsRedirect::unknown);
}

TEST_CASE("the kernel's release", "[network][rules]") {
    CHECK(kernel_version_of("5.15.0-105-generic") == std::pair{5, 15});
    CHECK(kernel_version_of("6.8") == std::pair{6, 8});
    CHECK_FALSE(kernel_version_of("linux"));
    CHECK_FALSE(kernel_version_of("5"));
}

TEST_CASE("the job's shape from each launcher's variables", "[network][job]") {
    CHECK(job_shape_of({}).nodes == 1);
    CHECK(job_shape_of({}).launcher == Launcher::none);
    CHECK(job_shape_of({}).node_rank == 0);

    LauncherVariables torchrun;
    torchrun.world_size = 16;
    torchrun.local_world_size = 8;
    torchrun.rank = 11;
    auto shape = job_shape_of(torchrun);
    CHECK(shape.nodes == 2);
    CHECK(shape.node_rank == 1);
    CHECK(shape.launcher == Launcher::torchrun);
    torchrun.group_rank = 0;  // GROUP_RANK says it directly
    CHECK(job_shape_of(torchrun).node_rank == 0);

    LauncherVariables kubeflow = torchrun;
    kubeflow.pet_nnodes = 4;
    kubeflow.pet_node_rank = 3;
    kubeflow.master_addr = "job-master-0";
    shape = job_shape_of(kubeflow);  // Kubeflow's first
    CHECK(shape.launcher == Launcher::kubeflow);
    CHECK(shape.nodes == 4);
    CHECK(shape.node_rank == 3);
    CHECK(shape.master_addr == "job-master-0");

    LauncherVariables slurm;
    slurm.slurm_nnodes = 3;
    slurm.slurm_nodeid = 2;
    CHECK(job_shape_of(slurm).launcher == Launcher::slurm);
    CHECK(job_shape_of(slurm).node_rank == 2);

    LauncherVariables mpi;
    mpi.ompi_world_size = 32;
    mpi.ompi_local_size = 8;
    mpi.ompi_rank = 17;
    CHECK(job_shape_of(mpi).nodes == 4);
    CHECK(job_shape_of(mpi).node_rank == 2);
    CHECK(job_shape_of(mpi).launcher == Launcher::mpi);
}

TEST_CASE("a job's shape that does not add up is one node, or a rank unknown, with a note", "[network][job]") {
    LauncherVariables uneven;
    uneven.world_size = 10;
    uneven.local_world_size = 4;
    auto shape = job_shape_of(uneven);
    CHECK(shape.nodes == 1);
    REQUIRE(shape.notes.size() == 1);
    CHECK(shape.notes[0].find("not a whole number of nodes") != std::string::npos);

    LauncherVariables rank_out;
    rank_out.nnodes = 2;
    rank_out.node_rank = 2;
    shape = job_shape_of(rank_out);
    CHECK(shape.nodes == 2);
    CHECK_FALSE(shape.node_rank);

    LauncherVariables huge;
    huge.nnodes = kMostNodes + 1;
    CHECK(job_shape_of(huge).nodes == 1);

    LauncherVariables alone;
    alone.world_size = 4;
    CHECK(job_shape_of(alone).notes.size() == 1);  // WORLD_SIZE without LOCAL_WORLD_SIZE says nothing of nodes
    LauncherVariables ignored;
    ignored.ignored = {"RANK=senior"};
    CHECK(job_shape_of(ignored).notes[0] == "RANK=senior is no whole number: left out of the job's shape");
}
