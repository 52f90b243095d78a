// The job's and the network's parts of the JSON report and the summary:
// always a job, a network only where the stage ran, null where the rank is
// unknown, and every name from sysfs escaped in the summary.
#include <catch2/catch.hpp>

#include "report/report.h"

using namespace provision;
using namespace provision::network;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Report two_node_report() {
    Report report;
    report.job.nodes = 2;
    report.job.launcher = Launcher::slurm;
    report.job.node_rank.reset();
    NetworkReport network;
    InterfaceReport eth;
    eth.name = "eth\x1b[0";
    eth.running = true;
    eth.addresses = {"10.0.0.5/24"};
    eth.state.operstate = "up";
    eth.state.mtu = 9000;
    network.interfaces = {eth};
    network.socket.rule = SocketRule::not_docker_lo_virbr;
    network.socket.interfaces = {{"eth\x1b[0", *parse_ip_address("10.0.0.5")}};
    RdmaDevice device;
    device.name = "mlx5_0";
    device.access = DeviceAccess::no_verbs_node;
    device.access_detail = "No such file or directory";
    RdmaPort port;
    port.number = 1;
    port.state = PortState::active;
    port.link_layer = LinkLayer::ethernet;
    port.rate_gbps = 200;
    port.gid = GidChoice{3, false, parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0005"), 2};
    device.ports = {port};
    network.rdma.devices = {device};
    network.transport_why = "no RDMA port NCCL can use";
    GpuDirectGpu gpu;
    gpu.gpu = 0;
    gpu.state = GpuDirectState::no_nic;
    network.gpudirect.gpus = {gpu};
    report.network = network;
    return report;
}

}  // namespace

TEST_CASE("job is always in the report; network only where the stage ran", "[network][report]") {
    Report one;
    const std::string json = render_json(one);
    CHECK(has(json, "\"job\" : {"));
    CHECK(has(json, "\"launcher\" : \"none\""));
    CHECK(has(json, "\"nodes\" : 1"));
    CHECK(has(json, "\"node_rank\" : 0"));
    CHECK_FALSE(has(json, "\"network\""));
    CHECK_FALSE(has(render_summary(one, false), "Network:"));
}

TEST_CASE("a job of two nodes: its network in the report, the summary and --explain", "[network][report]") {
    const Report report = two_node_report();
    const std::string json = render_json(report);
    CHECK(has(json, "\"node_rank\" : null"));  // the launcher did not say
    CHECK(has(json, "\"launcher\" : \"slurm\""));
    CHECK(has(json, "\"scope\" : \"job\""));
    CHECK(has(json, "\"transport\" : \"socket\""));
    CHECK(has(json, "\"rule\" : \"default\""));
    CHECK(has(json, "\"access\" : \"no-device-node\""));
    CHECK(has(json, "\"gid\" : \"::ffff:10.0.0.5\""));
    CHECK(has(json, "\"gid_index\" : 3"));
    CHECK(has(json, "\"roce_version\" : 2"));
    CHECK(has(json, "\"bootstrap\" : null"));
    CHECK(has(json, "\"state\" : \"no-nic\""));
    CHECK_FALSE(has(json, "\x1b"));  // JSON escapes it
    const std::string summary = render_summary(report, true);
    CHECK(has(summary, "Network:            2 nodes (slurm), this node unknown; NCCL over TCP sockets (no RDMA "
                       "port NCCL can use); interface eth\\x1b[0 (default)"));
    CHECK(has(summary, "    interface eth\\x1b[0: running, operstate up, MTU 9000, 10.0.0.5/24"));
    CHECK(has(summary, "    mlx5_0:1 Ethernet ACTIVE, no-device-node"));
    CHECK(has(summary, "    GPU 0 -> no NIC: path unknown, GPUDirect RDMA no-nic"));
    CHECK_FALSE(has(summary, "\x1b"));
}
