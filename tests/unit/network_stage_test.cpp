// The network stage on stand-in machines (tests/unit/network_stand_in.h):
// what it reads from sysfs, /dev and /proc, and every finding it makes,
// each from the files that cause it.
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "network/dma_buf_probe.h"
#include "network/gpudirect.h"
#include "network/network_stage.h"
#include "network/rdma_devices.h"
#include "network_stand_in.h"
#include "native_test_data.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_loader.h"

using namespace provision;
using namespace provision::network;
using network_test::PortSpec;
using network_test::StandIn;

namespace {

const HealthPolicy& policy() {
    static const RecipeSet recipes = load_recipes_over_builtins(std::nullopt, {});
    return recipes.policy;
}

const char* kTwoInterfaces = "lo up,running,loopback 127.0.0.1/8\neth0 up,running 10.0.0.5/24\n"
                             "eth1 up,running 10.1.0.5/16\n";

NetworkSettings job_settings(const StandIn& machine, const std::string& master_addr = "") {
    NetworkSettings settings;
    settings.scope = NetworkScope::job;
    settings.job.nodes = 2;
    settings.job.node_rank = 1;
    settings.job.master_addr = master_addr;
    settings.roots = machine.roots();
    settings.roots.ibverbs_library = native_test::data_path("ibverbs/libibverbs.so.1");
    return settings;
}

Inventory gpus_at(const std::vector<std::string>& bus_ids) {
    Inventory inventory;
    for (std::size_t i = 0; i < bus_ids.size(); ++i) {
        Gpu gpu;
        gpu.index = static_cast<int>(i);
        gpu.pci_bus_id = bus_ids[i];
        inventory.gpus.push_back(gpu);
    }
    return inventory;
}

NetworkReport run(const NetworkSettings& settings, const Inventory& inventory = {}) {
    NetworkReport report = read_network(settings);
    judge_network(report, inventory, policy(), settings);
    return report;
}

std::vector<const Finding*> findings_of(const NetworkReport& report, const std::string& signal) {
    std::vector<const Finding*> found;
    for (const Finding& finding : report.findings)
        if (finding.signal == signal) found.push_back(&finding);
    return found;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A machine with one GPU and one NIC behind one PCIe switch, peer memory
// loaded, an open kernel module and a new kernel: everything right.
struct GoodMachine {
    StandIn machine;
    std::string gpu_path, nic_path;
    GoodMachine(const std::string& link_layer = "InfiniBand") {
        gpu_path = machine.pci({"0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:03:00.0"});
        nic_path = machine.pci({"0000:00:01.0", "0000:01:00.0", "0000:02:10.0", "0000:04:00.0"});
        PortSpec port;
        port.link_layer = link_layer;
        port.gids = {network_test::kLinkLocalGid, network_test::kLinkLocalGid, network_test::ipv4_gid(10, 0, 0, 5),
                     network_test::ipv4_gid(10, 0, 0, 5)};
        port.types = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
        port.netdev = "eth0";
        machine.rdma("mlx5_0", nic_path, {port});
        machine.peer_memory("/module/nvidia_peermem/version");
        machine.kernel("6.8.0-45-generic");
        machine.nvidia_module(true);
        machine.interfaces(kTwoInterfaces);
        machine.interface_state("eth0", "up", 9000, 100000);
    }
};

}  // namespace

TEST_CASE("a machine where all is right: IB with GPUDirect, no finding", "[network][stage]") {
    GoodMachine good;
    const auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    CHECK(report.findings.empty());
    CHECK(report.transport == Transport::ib);
    REQUIRE(report.rdma.devices.size() == 1);
    const RdmaDevice& device = report.rdma.devices[0];
    CHECK(device.access == DeviceAccess::usable);
    CHECK(device.pci_path == good.nic_path);
    REQUIRE(device.ports.size() == 1);
    CHECK(device.ports[0].rate_gbps == 400);
    CHECK(device.ports[0].netdev == "eth0");
    REQUIRE(report.gpudirect.gpus.size() == 1);
    CHECK(report.gpudirect.gpus[0].state == GpuDirectState::on);
    CHECK(report.gpudirect.gpus[0].path == PathType::pix);
    CHECK(report.gpudirect.peer_memory == PeerMemory::nvidia_peermem);
    REQUIRE(report.interfaces.size() == 2);  // NET/Socket's list: eth0 and eth1
    CHECK(report.interfaces[0].name == "eth0");
    CHECK(report.interfaces[0].state.mtu == 9000);
    CHECK(report.interfaces[0].addresses == std::vector<std::string>{"10.0.0.5/24"});
}

TEST_CASE("socket_ifname_unmatched: NCCL_SOCKET_IFNAME names no interface, and the finding names those there are",
          "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    auto settings = job_settings(machine);
    settings.nccl.socket.socket_ifname = "nosuchif0";
    const auto report = run(settings);
    const auto found = findings_of(report, "socket_ifname_unmatched");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->level == HealthLevel::failed);
    CHECK(has(found[0]->words, "NCCL_SOCKET_IFNAME=nosuchif0"));
    CHECK(has(found[0]->words, "eth0 (up, 10.0.0.5)"));
    CHECK(has(found[0]->words, "Bootstrap : no socket interface found"));
}

TEST_CASE("bootstrap_interface_down: the interface named is down, or none is up", "[network][stage]") {
    StandIn machine;
    machine.interfaces("lo up,loopback 127.0.0.1/8\neth0 up,running 10.0.0.5/24\neth1 up 10.1.0.5/16\n");
    auto settings = job_settings(machine);
    settings.nccl.socket.socket_ifname = "=eth1";
    auto report = run(settings);
    auto found = findings_of(report, "bootstrap_interface_down");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "names eth1, which is down or without an address"));
    CHECK(findings_of(report, "socket_ifname_unmatched").empty());

    machine.interfaces("lo up,loopback 127.0.0.1/8\neth0 up 10.0.0.5/24\n");
    report = run(job_settings(machine));
    found = findings_of(report, "bootstrap_interface_down");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "no interface here is up"));
}

TEST_CASE("bootstrap_interface_mismatch: NCCL_SOCKET_IFNAME is written only when NCCL's interface misses MASTER_ADDR",
          "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    auto settings = job_settings(machine, "10.1.200.1");
    settings.roots.route_local = "10.1.0.5";  // the kernel reaches 10.1.200.1 through eth1
    auto report = run(settings);
    auto found = findings_of(report, "bootstrap_interface_mismatch");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->level == HealthLevel::degraded);
    CHECK(has(found[0]->words, "NCCL would take eth0 (10.0.0.5) by its default rule"));
    CHECK(has(found[0]->words, "through eth1 (from 10.1.0.5)"));
    REQUIRE(report.write.size() == 1);
    CHECK(report.write[0] == std::pair<std::string, std::string>{"NCCL_SOCKET_IFNAME", "=eth1"});
    REQUIRE(report.route);
    CHECK(report.route->interface == "eth1");

    // The same route through NCCL's own interface: nothing said, nothing written.
    settings.roots.route_local = "10.0.0.5";
    report = run(settings);
    CHECK(report.findings.empty());
    CHECK(report.write.empty());

    // MASTER_ADDR on this host (loopback): every address of NCCL's reaches it.
    settings.job.master_addr = "127.0.0.1";
    settings.roots.route_local = "127.0.0.1";
    report = run(settings);
    CHECK(report.findings.empty());
    CHECK(report.write.empty());

    // The user's own NCCL_SOCKET_IFNAME stays: the finding says so, nothing is written.
    settings.job.master_addr = "10.1.200.1";
    settings.roots.route_local = "10.1.0.5";
    settings.nccl.socket.socket_ifname = "eth0";
    report = run(settings);
    found = findings_of(report, "bootstrap_interface_mismatch");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "NCCL_SOCKET_IFNAME=eth0 stays, as the user set it"));
    CHECK(report.write.empty());
    REQUIRE(report.kept.size() == 1);
    CHECK(report.kept[0].value == "eth0");
}

TEST_CASE("no route to MASTER_ADDR, or a name that does not resolve: a note, never a finding", "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    auto settings = job_settings(machine, "10.9.9.9");
    settings.roots.route_local = "unreachable";
    auto report = run(settings);
    CHECK(report.findings.empty());
    CHECK(std::any_of(report.notes.begin(), report.notes.end(),
                      [](const std::string& note) { return has(note, "the route to MASTER_ADDR=10.9.9.9"); }));
    settings.job.master_addr = std::string(300, 'x');  // no host name
    report = run(settings);
    CHECK(report.findings.empty());
    REQUIRE(report.route);
    CHECK(has(report.route->detail, "is no host name"));
}

TEST_CASE("the route through the kernel: a connected UDP socket's local address", "[network][stage]") {
    InterfaceList list = parse_interface_stand_in("lo up,running,loopback 127.0.0.1/8\n");
    const auto route = route_to_master("127.0.0.1", list);
    REQUIRE(route.local);
    CHECK(route.local->str() == "127.0.0.1");
    CHECK(route.interface == "lo");
    CHECK(route.loopback);
}

TEST_CASE("rdma_devices_hidden: devices the host has and this container cannot open", "[network][stage]") {
    GoodMachine good;
    PortSpec port;
    good.machine.rdma("mlx5_1", good.machine.pci({"0000:00:02.0", "0000:11:00.0"}), {port}, 1, /*node=*/false);
    auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    auto found = findings_of(report, "rdma_devices_hidden");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "mlx5_1"));
    CHECK(has(found[0]->words, "/dev/infiniband/uverbs1"));
    CHECK(has(found[0]->words, "NCCL uses only the ports it can open"));
    CHECK(report.transport == Transport::ib);

    // None can be opened: NCCL moves to sockets without a word.
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    machine.rdma("mlx5_0", machine.pci({"0000:00:01.0", "0000:04:00.0"}), {port}, 0, false);
    report = run(job_settings(machine));
    CHECK(report.transport == Transport::socket);
    found = findings_of(report, "rdma_devices_hidden");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "over TCP sockets without an error"));
    CHECK(has(found[0]->words, "IPC_LOCK"));
}

TEST_CASE("rdma_devices_hidden: a verbs node that cannot be opened, and no libibverbs in the image",
          "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    machine.rdma("mlx5_0", machine.pci({"0000:00:01.0", "0000:04:00.0"}), {PortSpec{}}, 0, false);
    std::filesystem::create_directories(machine.dev() + "/infiniband/uverbs0");  // a folder, not a device
    auto report = run(job_settings(machine));
    REQUIRE(report.rdma.devices.size() == 1);
    CHECK(report.rdma.devices[0].access == DeviceAccess::cannot_open);
    CHECK(findings_of(report, "rdma_devices_hidden").size() == 1);

    GoodMachine good;
    auto settings = job_settings(good.machine);
    settings.roots.ibverbs_library = good.machine.path() + "/no/libibverbs.so.1";
    report = run(settings);
    CHECK(report.transport == Transport::socket);
    CHECK(report.ibverbs_missing);
    const auto found = findings_of(report, "rdma_devices_hidden");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "is not in the image"));
}

TEST_CASE("ib_hca_unmatched, and NCCL_IB_HCA's ports", "[network][stage]") {
    GoodMachine good;
    auto settings = job_settings(good.machine);
    settings.nccl.ib_hca = "mlx5_9";
    auto report = run(settings);
    const auto found = findings_of(report, "ib_hca_unmatched");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "NCCL_IB_HCA=mlx5_9 leaves NCCL none of the active ports (mlx5_0:1)"));
    CHECK(report.transport == Transport::socket);
    settings.nccl.ib_hca = "mlx5_0:1";
    CHECK(run(settings).transport == Transport::ib);
    settings.nccl.ib_hca = "mlx5_0:2";
    CHECK(run(settings).transport == Transport::socket);
    settings.nccl.ib_hca = "^mlx5_0";
    CHECK(run(settings).transport == Transport::socket);
}

TEST_CASE("rdma_port_init, rdma_port_slow and rdma_link_layers_mixed", "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    PortSpec fast, slow, init, roce;
    slow.number = 2;
    slow.rate = "100 Gb/sec (4X EDR)";
    init.number = 3;
    init.state = "2: INIT";
    const auto pci = machine.pci({"0000:00:01.0", "0000:04:00.0"});
    machine.rdma("mlx5_0", pci, {fast, slow, init});
    auto report = run(job_settings(machine));
    auto found = findings_of(report, "rdma_port_init");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "port mlx5_0:3 is in INIT: no subnet manager"));
    found = findings_of(report, "rdma_port_slow");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "mlx5_0:2 at 100 Gb/sec (4X EDR)"));
    CHECK(has(found[0]->words, "(400 Gb/sec)"));
    CHECK(findings_of(report, "rdma_link_layers_mixed").empty());

    roce.link_layer = "Ethernet";
    roce.gids = {network_test::ipv4_gid(10, 0, 0, 7)};
    roce.types = {"RoCE v2"};
    machine.rdma("mlx5_1", machine.pci({"0000:00:02.0", "0000:14:00.0"}), {roce}, 1);
    report = run(job_settings(machine));
    CHECK(findings_of(report, "rdma_link_layers_mixed").size() == 1);
}

TEST_CASE("roce_gid_unusable: NCCL's GID is link-local or unset; NCCL_IB_GID_INDEX is never written",
          "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    PortSpec port;
    port.link_layer = "Ethernet";
    port.gids = {network_test::kLinkLocalGid, network_test::kLinkLocalGid, network_test::kUnsetGid};
    port.types = {"IB/RoCE v1", "RoCE v2", ""};
    port.netdev = "eth2";
    machine.rdma("mlx5_0", machine.pci({"0000:00:01.0", "0000:04:00.0"}), {port});
    auto report = run(job_settings(machine));
    auto found = findings_of(report, "roce_gid_unusable");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "GID index 0 (fe80::a1b:2cff:fe3d:4e5f), which is link-local"));
    CHECK(has(found[0]->words, "give eth2 an IP address"));
    CHECK(report.write.empty());

    auto settings = job_settings(machine);
    settings.nccl.gid.gid_index = "2";
    report = run(settings);
    found = findings_of(report, "roce_gid_unusable");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "GID index 2, which is not set (NCCL_IB_GID_INDEX)"));
    CHECK(report.write.empty());

    GoodMachine good("Ethernet");  // an IPv4 RoCE v2 GID at index 3
    report = run(job_settings(good.machine));
    CHECK(findings_of(report, "roce_gid_unusable").empty());
    CHECK(report.rdma.devices[0].ports[0].gid->index == 3);
}

TEST_CASE("gpudirect_unavailable: no peer memory and no dma-buf", "[network][stage]") {
    GoodMachine good;
    std::filesystem::remove_all(good.machine.sysfs() + "/module/nvidia_peermem");
    good.machine.nvidia_module(false);  // the proprietary module exports no dma-buf
    auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    auto found = findings_of(report, "gpudirect_unavailable");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "proprietary kernel module"));
    CHECK(report.gpudirect.gpus[0].state == GpuDirectState::unsupported);

    good.machine.kernel("5.4.0-200-generic");
    good.machine.nvidia_module(true);
    report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    found = findings_of(report, "gpudirect_unavailable");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]->words, "kernel 5.4.0-200-generic is older than 5.12"));
}

TEST_CASE("dma-buf from NCCL's own probe through libibverbs (a stand-in library)", "[network][stage]") {
    GoodMachine good;
    std::filesystem::remove_all(good.machine.sysfs() + "/module/nvidia_peermem");
    {
        test_support::ScopedEnv errno_word("FAKE_IBVERBS_DMABUF_ERRNO", std::string("EBADF"));
        const auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
        CHECK(report.gpudirect.dma_buf == DmaBuf::supported);
        CHECK(report.gpudirect.probe.outcome == ProbeOutcome::supported);
        CHECK(report.gpudirect.gpus[0].state == GpuDirectState::on);
        CHECK(findings_of(report, "gpudirect_unavailable").empty());
    }
    {
        test_support::ScopedEnv errno_word("FAKE_IBVERBS_DMABUF_ERRNO", std::string("EOPNOTSUPP"));
        const auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
        CHECK(report.gpudirect.dma_buf == DmaBuf::unsupported);
        CHECK(findings_of(report, "gpudirect_unavailable").size() == 1);
    }
    {
        test_support::ScopedEnv no_open("FAKE_IBVERBS_NO_OPEN", std::string("1"));
        const auto probe = probe_dma_buf(native_test::data_path("ibverbs/libibverbs.so.1"), "mlx5_0");
        CHECK(probe.outcome == ProbeOutcome::not_made);
        CHECK(has(probe.detail, "ibv_open_device(mlx5_0)"));
    }
    CHECK(probe_dma_buf(native_test::data_path("ibverbs/libibverbs.so.1"), "mlx5_7").outcome == ProbeOutcome::not_made);
    // With peer memory loaded the probe is not made at all.
    good.machine.peer_memory("/kernel/mm/memory_peers/nv_mem/version");
    const auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    CHECK(report.gpudirect.peer_memory == PeerMemory::nv_mem);
    CHECK(report.gpudirect.probe.outcome == ProbeOutcome::not_made);
}

TEST_CASE("gpudirect_too_far: the nearest NIC through the CPU, beyond NCCL_NET_GDR_LEVEL", "[network][stage]") {
    GoodMachine good;
    good.machine.pci({"0000:00:03.0", "0000:21:00.0", "0000:22:00.0", "0000:23:00.0"});
    auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0", "0000:23:00.0"}));
    auto found = findings_of(report, "gpudirect_too_far");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->gpu == 1);
    CHECK(has(found[0]->words, "GPU 1's nearest NIC NCCL takes, mlx5_0, is PHB away (through the CPU), beyond P2C"));
    CHECK(report.gpudirect.gpus[0].state == GpuDirectState::on);
    CHECK(report.gpudirect.gpus[1].state == GpuDirectState::too_far);

    auto settings = job_settings(good.machine);
    settings.nccl.gdr_level = "PHB";
    report = run(settings, gpus_at({"0000:03:00.0", "0000:23:00.0"}));
    CHECK(findings_of(report, "gpudirect_too_far").empty());
    settings.nccl.gdr_level.reset();
    settings.nccl.topo_file = "/opt/topo.xml";  // NCCL reads its paths from there
    report = run(settings, gpus_at({"0000:03:00.0", "0000:23:00.0"}));
    CHECK(findings_of(report, "gpudirect_too_far").empty());
}

TEST_CASE("pcie_acs_redirect: ACS redirection on a bridge between a GPU and its NIC", "[network][stage]") {
    GoodMachine good;
    good.machine.acs("0000:02:08.0", 0x001d);  // source validation, request and completion redirect, upstream fwd
    good.machine.acs("0000:02:10.0", 0x0001);
    auto report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    const auto found = findings_of(report, "pcie_acs_redirect");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->gpu == 0);
    CHECK(has(found[0]->words, "bridge 0000:02:08.0 between GPU 0 and mlx5_0"));
    CHECK(report.gpudirect.gpus[0].acs_redirect == std::vector<std::string>{"0000:02:08.0"});
    // A bridge whose configuration space cannot be read past 64 bytes: a note.
    good.machine.write(good.machine.sysfs() + "/bus/pci/devices/0000:02:08.0/config", std::string(64, '\0'));
    report = run(job_settings(good.machine), gpus_at({"0000:03:00.0"}));
    CHECK(findings_of(report, "pcie_acs_redirect").empty());
    CHECK(std::any_of(report.notes.begin(), report.notes.end(),
                      [](const std::string& note) { return has(note, "CAP_SYS_ADMIN"); }));
}

TEST_CASE("NCCL_NET=Socket or NCCL_IB_DISABLE: no RDMA findings, the socket transport", "[network][stage]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    machine.rdma("mlx5_0", machine.pci({"0000:00:01.0", "0000:04:00.0"}), {PortSpec{}}, 0, false);
    auto settings = job_settings(machine);
    settings.nccl.ib_disable = "1";
    auto report = run(settings);
    CHECK(report.transport == Transport::socket);
    CHECK(report.findings.empty());
    settings.nccl.ib_disable.reset();
    settings.nccl.net = "socket";
    CHECK(run(settings).findings.empty());
}

TEST_CASE("a node's facts for labels: RDMA and GPUDirect, no interfaces, no findings", "[network][stage]") {
    GoodMachine good;
    PortSpec port;
    good.machine.rdma("mlx5_1", good.machine.pci({"0000:00:02.0", "0000:11:00.0"}), {port}, 1, /*node=*/false);
    auto settings = job_settings(good.machine);
    settings.scope = NetworkScope::node_facts;
    const auto report = run(settings, gpus_at({"0000:03:00.0"}));
    CHECK(report.findings.empty());
    CHECK(report.interfaces.empty());
    CHECK(report.taken.size() == 2);  // a node's facts: ports the host has, mounted here or not
    CHECK(report.transport == Transport::ib);
    CHECK(report.gpudirect.gpus[0].state == GpuDirectState::on);
}

TEST_CASE("hostile sysfs: unreadable, missing and endless entries give a bounded reading", "[network][stage][bounds]") {
    StandIn machine;
    machine.interfaces(kTwoInterfaces);
    const auto pci = machine.pci({"0000:00:01.0", "0000:04:00.0"});
    // A port whose attributes are folders and FIFOs, a GID table of 5000 entries, a name with an escape.
    PortSpec port;
    port.link_layer = "Ethernet";
    for (int i = 0; i < 5000; ++i) port.gids.push_back(network_test::kUnsetGid);
    machine.rdma("mlx5_\x1b[31m", pci, {port});
    const std::string ports = machine.sysfs() + "/class/infiniband/mlx5_\x1b[31m/ports/";
    std::filesystem::remove(ports + "1/rate");
    std::filesystem::create_directories(ports + "1/rate");
    REQUIRE(::mkfifo((ports + "1/phys_state.fifo").c_str(), 0600) == 0);
    std::filesystem::remove(ports + "1/phys_state");
    std::filesystem::rename(ports + "1/phys_state.fifo", ports + "1/phys_state");
    // A second device with 200 ports: at most kMostRdmaPorts are read.
    std::vector<PortSpec> crowd(200);
    for (int i = 0; i < 200; ++i) crowd[static_cast<std::size_t>(i)].number = i + 1;
    machine.rdma("mlx5_9", pci, crowd, 9);
    const auto report = run(job_settings(machine));
    REQUIRE(report.rdma.devices.size() == 2);
    const RdmaDevice& device = report.rdma.devices[0];
    REQUIRE(device.ports.size() == 1);
    const RdmaPort& first = device.ports[0];
    CHECK_FALSE(first.rate_gbps);     // a folder where the rate belongs
    CHECK(first.phys_state.empty());  // a FIFO is never read
    CHECK(first.gids.size() == kMostGids);
    CHECK(first.gids_truncated);
    CHECK(report.rdma.devices[1].ports_left_out == 200 - kMostRdmaPorts);
    REQUIRE(report.rdma.devices[1].ports.size() == kMostRdmaPorts);
    CHECK(report.rdma.devices[1].ports.front().number == 1);  // the lowest numbers, whatever readdir's order
    CHECK(report.rdma.devices[1].ports.back().number == static_cast<int>(kMostRdmaPorts));
    // The name comes out escaped in every finding.
    for (const Finding& finding : report.findings) CHECK_FALSE(has(finding.words, "\x1b"));

    // Thousands of devices: the first kMostRdmaDevices in NCCL's order are
    // read (mlx5_2 before mlx5_10), and those NCCL_IB_HCA names.
    StandIn many;
    many.interfaces(kTwoInterfaces);
    const auto nic = many.pci({"0000:00:01.0", "0000:04:00.0"});
    for (int i = 0; i < 100; ++i) many.rdma("mlx5_" + std::to_string(i), nic, {}, i);
    const auto crowded = run(job_settings(many));
    REQUIRE(crowded.rdma.devices.size() == kMostRdmaDevices);
    CHECK(crowded.rdma.devices_left_out == 100 - kMostRdmaDevices);
    CHECK(crowded.rdma.devices[0].name == "mlx5_0");
    CHECK(crowded.rdma.devices[2].name == "mlx5_2");
    CHECK(crowded.rdma.devices.back().name == "mlx5_" + std::to_string(kMostRdmaDevices - 1));
    CHECK(std::any_of(crowded.notes.begin(), crowded.notes.end(),
                      [](const std::string& note) { return has(note, "36 RDMA devices were not read"); }));
    NetworkSettings named = job_settings(many);
    named.nccl.ib_hca = "=mlx5_99";
    const auto chosen = run(named);
    REQUIRE(chosen.rdma.devices.size() == kMostRdmaDevices + 1);
    CHECK(chosen.rdma.devices.back().name == "mlx5_99");
}

TEST_CASE("the GID tables read stay within their budget", "[network][stage][bounds]") {
    StandIn machine;
    const auto pci = machine.pci({"0000:00:01.0", "0000:04:00.0"});
    PortSpec port;
    port.link_layer = "Ethernet";
    for (int i = 0; i < 3000; ++i) port.gids.push_back(network_test::kUnsetGid);
    machine.rdma("mlx5_0", pci, {port});
    GidTableReader reader{machine.sysfs(), 1500};
    RdmaPort read_port;
    read_port.number = 1;
    reader.read("mlx5_0", read_port);
    CHECK(read_port.gids.size() == kMostGids);  // the listing stops at kMostGids
    CHECK(read_port.gids_truncated);
    CHECK(reader.budget == 1500 - kMostGids);
    RdmaPort again;
    again.number = 1;
    reader.read("mlx5_0", again);
    CHECK(reader.budget == 0);
    CHECK(std::count_if(again.gids.begin(), again.gids.end(), [](const auto& gid) { return gid.has_value(); }) ==
          static_cast<long>(1500 - kMostGids));
}

TEST_CASE("peer memory and dma-buf facts from files", "[network][stage]") {
    StandIn machine;
    CHECK(read_peer_memory(machine.sysfs()) == PeerMemory::none);
    machine.peer_memory("/kernel/mm/memory_peers/nv_mem_nc/version");
    CHECK(read_peer_memory(machine.sysfs()) == PeerMemory::nv_mem_nc);
    auto facts = read_dma_buf_facts(machine.proc(), std::nullopt);
    CHECK(facts.enabled);
    CHECK_FALSE(facts.kernel_new_enough);
    CHECK_FALSE(facts.open_kernel_module);
    machine.kernel("5.12.0");
    machine.nvidia_module(true);
    facts = read_dma_buf_facts(machine.proc(), std::string("0"));
    CHECK_FALSE(facts.enabled);
    CHECK(facts.kernel_new_enough == true);
    CHECK(facts.open_kernel_module == true);
}
