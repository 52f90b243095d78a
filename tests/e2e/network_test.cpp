// Between nodes, end to end: the job's shape from each launcher's
// variables, and on several nodes the network NCCL will use, read from
// stand-ins for sysfs, /dev, /proc, the interface list and the route
// (PROVISION_TEST_SYSFS, _DEV, _PROC, _INTERFACES, _ROUTE), with a stand-in
// libibverbs for NCCL's dma-buf probe.  On one node nothing of it runs.
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "publish_support.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::findings_of;
using e2e::has;

namespace fs = std::filesystem;

namespace {

const std::string kIbverbs = std::string(PROVISION_NATIVE_TEST_DATA) + "/ibverbs/libibverbs.so.1";

// A stand-in machine: eth0 and eth1 up, lo, and what each test adds to its
// sysfs; a kernel and an NVIDIA module that allow dma-buf.
struct Machine {
    TempDir dir;
    Machine() {
        e2e::write_file(dir.file("interfaces"), "lo up,running,loopback 127.0.0.1/8\neth0 up,running 10.0.0.5/24\n"
                                                "eth1 up,running 10.1.0.5/16\n");
        fs::create_directories(dir.file("sys"));
        fs::create_directories(dir.file("dev"));
        fs::create_directories(dir.file("proc/sys/kernel"));
        fs::create_directories(dir.file("proc/driver/nvidia"));
        e2e::write_file(dir.file("proc/sys/kernel/osrelease"), "6.8.0-45-generic\n");
        e2e::write_file(dir.file("proc/driver/nvidia/version"),
                        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n");
    }
    std::map<std::string, std::string> env(std::map<std::string, std::string> more = {}) const {
        std::map<std::string, std::string> env = {{"PROVISION_TEST_SYSFS", dir.file("sys")},
                                                  {"PROVISION_TEST_DEV", dir.file("dev")},
                                                  {"PROVISION_TEST_PROC", dir.file("proc")},
                                                  {"PROVISION_TEST_INTERFACES", dir.file("interfaces")},
                                                  {"PROVISION_TEST_ROUTE", "10.0.0.5"},  // eth0's
                                                  {"NCCL_IBVERBS_LIB", kIbverbs}};
        for (auto& [name, value] : more) env[name] = value;
        return env;
    }
    // An RDMA device behind a PCIe switch, its verbs node in /dev unless `node` is false.
    void rdma(const std::string& name, bool node = true, const std::string& state = "4: ACTIVE", int ports = 1) {
        const std::string pci = dir.file("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0");
        fs::create_directories(pci + "/infiniband_verbs/uverbs0");
        const std::string folder = dir.file("sys/class/infiniband/" + name);
        fs::create_directories(folder);
        fs::create_directory_symlink(fs::relative(pci, folder), folder + "/device");
        for (int number = 1; number <= ports; ++number) {
            const std::string port = folder + "/ports/" + std::to_string(number);
            fs::create_directories(port + "/gids");
            e2e::write_file(port + "/state", state + "\n");
            e2e::write_file(port + "/phys_state", "5: LinkUp\n");
            e2e::write_file(port + "/rate", "400 Gb/sec (4X NDR)\n");
            e2e::write_file(port + "/link_layer", "InfiniBand\n");
            e2e::write_file(port + "/gids/0", "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f\n");
        }
        if (node) e2e::write_file(dir.file("dev/infiniband/uverbs0"), "");
    }
};

// Two nodes of torchrun's workers (16 processes, 8 a node), this one rank 1.
std::map<std::string, std::string> two_nodes(const std::string& master = "10.0.0.1") {
    return {{"WORLD_SIZE", "16"}, {"LOCAL_WORLD_SIZE", "8"}, {"RANK", "8"}, {"MASTER_ADDR", master}};
}

std::map<std::string, std::string> joined(std::map<std::string, std::string> a,
                                          const std::map<std::string, std::string>& b) {
    for (const auto& [name, value] : b) a[name] = value;
    return a;
}

e2e::Result check(const TempDir& dir, const std::map<std::string, std::string>& env,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--check", "--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"),
                                     "--site-packages", e2e::site_packages("torch-only")};
    args.insert(args.end(), extra.begin(), extra.end());
    (void)dir;
    return e2e::provision(args, env);
}

}  // namespace

TEST_CASE("one node: the job is one node and nothing between nodes is read", "[network]") {
    Machine machine;
    machine.rdma("mlx5_0", /*node=*/false);  // would be a finding on several nodes
    const auto result = check(machine.dir, machine.env());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["job"] == nlohmann::json({{"nodes", 1}, {"node_rank", 0}, {"launcher", "none"}}));
    CHECK_FALSE(report.contains("network"));
    CHECK_FALSE(report["timings"].contains("network"));
    CHECK(findings_of(report, "rdma_devices_hidden").empty());
    CHECK_FALSE(has(result.err, "Network:"));
}

TEST_CASE("each launcher's variables give the job's shape", "[network]") {
    Machine machine;
    const std::vector<std::pair<std::map<std::string, std::string>, nlohmann::json>> cases = {
        {two_nodes(), {{"nodes", 2}, {"node_rank", 1}, {"launcher", "torchrun"}}},
        {{{"PET_NNODES", "1:4"}, {"PET_NODE_RANK", "3"}, {"PET_MASTER_ADDR", "10.0.0.1"}},
         {{"nodes", 4}, {"node_rank", 3}, {"launcher", "kubeflow"}}},
        {{{"NNODES", "3"}, {"NODE_RANK", "0"}}, {{"nodes", 3}, {"node_rank", 0}, {"launcher", "torchrun"}}},
        {{{"SLURM_JOB_NUM_NODES", "8"}, {"SLURM_NODEID", "5"}},
         {{"nodes", 8}, {"node_rank", 5}, {"launcher", "slurm"}}},
        {{{"OMPI_COMM_WORLD_SIZE", "16"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "9"}},
         {{"nodes", 4}, {"node_rank", 2}, {"launcher", "mpi"}}},
    };
    for (const auto& [variables, expected] : cases) {
        const auto result = check(machine.dir, machine.env(variables));
        INFO(result.err);
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["job"] == expected);
        CHECK(report.contains("network"));
        CHECK(report["timings"].contains("network"));
    }
}

TEST_CASE("a launcher's variable that is no whole number is a note, never a refusal", "[network]") {
    Machine machine;
    const auto result = check(machine.dir, machine.env({{"RANK", "senior"}, {"NNODES", "2"}, {"NODE_RANK", "x1"}}));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["job"]["nodes"] == 2);
    CHECK(report["job"]["node_rank"].is_null());
    CHECK(has(result.err, "NODE_RANK=x1 is no whole number"));
    CHECK(has(result.err, "RANK=senior is no whole number"));
}

TEST_CASE("two nodes: the interface NCCL takes, as NCCL takes it, beside the route to MASTER_ADDR", "[network]") {
    Machine machine;
    const auto result =
        check(machine.dir, machine.env(joined(two_nodes("10.0.0.1"), {{"PROVISION_TEST_ROUTE", "10.0.0.5"}})));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    const auto& network = report["network"];
    CHECK(network["socket"]["interfaces"] == nlohmann::json({"eth0", "eth1"}));
    CHECK(network["socket"]["bootstrap"] == "eth0");
    CHECK(network["socket"]["rule"] == "default");
    CHECK(network["route"]["interface"] == "eth0");
    CHECK(network["transport"] == "socket");
    CHECK(report["verdict"] == "ok");
    CHECK(has(result.err, "Network:"));
    CHECK(has(result.err, "NCCL over TCP sockets (no RDMA device)"));
}

TEST_CASE("NCCL_SOCKET_IFNAME that matches nothing fails the start, naming the interfaces there are", "[network]") {
    Machine machine;
    TempDir dir;
    const auto result = e2e::provision(
        {"--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
         e2e::site_packages("torch-only"), "--env-file", dir.file("env"), "--", "true"},
        machine.env(joined(two_nodes(), {{"NCCL_SOCKET_IFNAME", "nosuchif0"}})));
    INFO(result.err);
    CHECK(result.exit_code == 5);
    CHECK_FALSE(fs::exists(dir.file("env")));
    const auto report = e2e::report(result);
    const auto found = findings_of(report, "socket_ifname_unmatched");
    REQUIRE(found.size() == 1);
    CHECK(found[0]["level"] == "failed");
    const std::string words = found[0]["message"];
    CHECK(has(words, "eth0 (up, 10.0.0.5)"));
    reliability::record("network", "two nodes, NCCL_SOCKET_IFNAME=nosuchif0 (no such interface)",
                        "exit 5 before the workload: socket_ifname_unmatched names the interfaces there are");
}

TEST_CASE("NCCL's interface misses MASTER_ADDR: NCCL_SOCKET_IFNAME is written with its reason", "[network]") {
    Machine machine;
    TempDir dir;
    const auto result = e2e::provision(
        {"--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
         e2e::site_packages("torch-only"), "--env-file", dir.file("env")},
        machine.env(joined(two_nodes("10.1.200.1"), {{"PROVISION_TEST_ROUTE", "10.1.0.5"}})));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto found = findings_of(report, "bootstrap_interface_mismatch");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]["message"], "NCCL_SOCKET_IFNAME==eth1 is written"));
    CHECK(report["env"]["NCCL_SOCKET_IFNAME"] == "=eth1");
    CHECK(e2e::source_env_file(dir.file("env"), {"NCCL_SOCKET_IFNAME"})["NCCL_SOCKET_IFNAME"] == "=eth1");

    // The user's own value stays, and nothing is written over it.
    const auto kept = e2e::provision(
        {"--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
         e2e::site_packages("torch-only"), "--env-file", dir.file("env2")},
        machine.env(joined(two_nodes("10.1.200.1"), {{"PROVISION_TEST_ROUTE", "10.1.0.5"},
                                                     {"NCCL_SOCKET_IFNAME", "eth0"}})));
    const auto kept_report = e2e::report(kept);
    CHECK(kept_report["env"]["NCCL_SOCKET_IFNAME"] == "eth0");
    CHECK(has(findings_of(kept_report, "bootstrap_interface_mismatch")[0]["message"], "stays, as the user set it"));
    reliability::record("network", "two nodes, NCCL would bootstrap on eth0 while MASTER_ADDR is routed through eth1",
                        "degraded; NCCL_SOCKET_IFNAME==eth1 written with its reason (a user's own value kept)");
}

TEST_CASE("RDMA devices the container cannot open: NCCL would fall back to sockets, said so", "[network]") {
    Machine machine;
    machine.rdma("mlx5_0", /*node=*/false);
    const auto result = check(machine.dir, machine.env(two_nodes()));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    CHECK(report["network"]["transport"] == "socket");
    CHECK(report["network"]["rdma"][0]["access"] == "no-device-node");
    const auto found = findings_of(report, "rdma_devices_hidden");
    REQUIRE(found.size() == 1);
    CHECK(has(found[0]["message"], "/dev/infiniband/uverbs0"));
    // The container's change, from the devices the host has.
    CHECK(found[0]["action"]["actor"] == "container");
    CHECK(has(found[0]["action"]["docker"], "--device /dev/infiniband/uverbs0 --device /dev/infiniband/rdma_cm"));
    CHECK(has(found[0]["action"]["kubernetes"], "resourceClaims"));
    CHECK(has(result.err, "container: give the container the host's RDMA devices; Docker: --device /dev/infiniband/uverbs0"));
    reliability::record("network", "two nodes, /sys lists mlx5_0 but /dev/infiniband is not mounted",
                        "degraded: rdma_devices_hidden says NCCL falls back to TCP and what the pod must request");
}

TEST_CASE("RDMA in the container with GPUDirect through dma-buf (the probe on a stand-in libibverbs)", "[network]") {
    Machine machine;
    machine.rdma("mlx5_0");
    auto result = check(machine.dir, machine.env(two_nodes()));
    INFO(result.err);
    CHECK(result.exit_code == 0);
    auto report = e2e::report(result);
    CHECK(report["network"]["transport"] == "ib");
    CHECK(report["network"]["gpudirect"]["dma_buf"] == "supported");
    CHECK(report["network"]["rdma"][0]["ports"][0]["taken"] == true);
    CHECK(findings_of(report, "gpudirect_unavailable").empty());

    result = check(machine.dir, machine.env(joined(two_nodes(), {{"FAKE_IBVERBS_DMABUF_ERRNO", "EOPNOTSUPP"}})));
    report = e2e::report(result);
    CHECK(report["network"]["gpudirect"]["dma_buf"] == "unsupported");
    CHECK(findings_of(report, "gpudirect_unavailable").size() == 1);
}

TEST_CASE("a node's labels and metrics carry RDMA and GPUDirect on one node too", "[network][publish]") {
    Machine machine;
    machine.rdma("mlx5_0");
    e2e::write_file(machine.dir.file("sys/module/nvidia_peermem/version"), "1.0\n");
    TempDir out;
    const auto result =
        check(machine.dir, machine.env(),
              {"--node-labels", out.file("labels"), "--metrics", out.file("provision.prom")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const std::string labels = e2e::read_file(out.file("labels"));
    CHECK(has(labels, "provision/rdma=true\n"));
    CHECK(has(labels, "provision/rdma.link_layer=infiniband\n"));
    const std::string metrics = e2e::read_file(out.file("provision.prom"));
    CHECK(has(metrics, "provision_rdma_port_active{device=\"mlx5_0\",port=\"1\",link_layer=\"InfiniBand\"} 1"));
    CHECK(has(metrics, "provision_network_transport{transport=\"ib\"} 1"));
    const auto report = e2e::report(result);
    CHECK(report["network"]["scope"] == "node");
    CHECK(report["findings"].empty());
}

namespace {

// The names of the RDMA devices in the report, in its order.
std::vector<std::string> rdma_names(const nlohmann::json& report) {
    std::vector<std::string> names;
    for (const auto& device : report["network"]["rdma"]) names.push_back(device["device"]);
    return names;
}

bool warned(const nlohmann::json& report, const std::string& words) {
    for (const auto& warning : report["warnings"])
        if (has(warning.get<std::string>(), words)) return true;
    return false;
}

// The series of a metrics file (a sample's name and labels) written more than once.
std::vector<std::string> repeated_series(const std::string& metrics) {
    std::set<std::string> seen;
    std::vector<std::string> repeated;
    std::istringstream lines(metrics);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] == '#') continue;
        const std::string series = line.substr(0, line.rfind(' '));
        if (!seen.insert(series).second) repeated.push_back(series);
    }
    return repeated;
}

}  // namespace

TEST_CASE("past the RDMA bounds: the devices and ports NCCL meets first are read, the rest counted",
          "[network][bounds]") {
    SECTION("10,000 devices (an SR-IOV host): mlx5_0 to mlx5_63 in NCCL's order") {
        Machine machine;
        machine.rdma("mlx5_0");  // made first: a file system that lists newest first puts it last
        for (int i = 1; i < 10000; ++i)
            fs::create_directory(machine.dir.file("sys/class/infiniband/mlx5_" + std::to_string(i)));
        const auto result = check(machine.dir, machine.env(two_nodes()));
        INFO(result.err);
        const auto report = e2e::report(result);
        const auto names = rdma_names(report);
        REQUIRE(names.size() == 64);
        for (std::size_t i = 0; i < names.size(); ++i) CHECK(names[i] == "mlx5_" + std::to_string(i));
        CHECK(report["network"]["rdma"][0]["ports"].size() == 1);
        CHECK(warned(report, "9936 RDMA devices were not read, past the bound of 64"));
    }
    SECTION("NCCL_IB_HCA names a device past the bound: it is read too") {
        Machine machine;
        machine.rdma("mlx5_0");
        for (int i = 1; i < 100; ++i)
            fs::create_directory(machine.dir.file("sys/class/infiniband/mlx5_" + std::to_string(i)));
        const auto result = check(machine.dir, machine.env(joined(two_nodes(), {{"NCCL_IB_HCA", "=mlx5_0,mlx5_99"}})));
        const auto names = rdma_names(e2e::report(result));
        REQUIRE(names.size() == 66);  // the two it names, and the first 64 of the rest
        CHECK(names[0] == "mlx5_0");
        CHECK(names[64] == "mlx5_64");
        CHECK(names.back() == "mlx5_99");
    }
    SECTION("200 ports: ports 1 to 32") {
        Machine machine;
        machine.rdma("mlx5_0", true, "4: ACTIVE", 200);
        const auto result = check(machine.dir, machine.env(two_nodes()));
        INFO(result.err);
        const auto report = e2e::report(result);
        const auto& ports = report["network"]["rdma"][0]["ports"];
        REQUIRE(ports.size() == 32);
        for (std::size_t i = 0; i < ports.size(); ++i) CHECK(ports[i]["port"] == static_cast<int>(i) + 1);
        CHECK(warned(report, "168 ports of RDMA device mlx5_0 were not read, past the bound of 32"));
    }
    reliability::record("network", "10,000 RDMA devices (SR-IOV), or a device with 200 ports",
                        "the first 64 devices in NCCL's order (mlx5_0, mlx5_1, mlx5_2, ... mlx5_63) and those "
                        "NCCL_IB_HCA names, ports 1 to 32; a note says how many were left out");
}

TEST_CASE("a node with RDMA ports: metrics promtool accepts, no label set written twice", "[network][publish]") {
    Machine machine;
    machine.rdma("mlx5_0");
    // Names that differ only in bytes a label value cannot hold (not UTF-8, control characters).
    machine.rdma("bad\xff");
    machine.rdma("bad\xfe");
    machine.rdma("ctl\x01");
    machine.rdma("ctl\x02");
    TempDir out;
    const auto result = check(machine.dir, machine.env(), {"--metrics", out.file("provision.prom")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const std::string metrics = e2e::read_file(out.file("provision.prom"));
    INFO(metrics);
    CHECK(repeated_series(metrics).empty());
    CHECK(has(metrics, "provision_rdma_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"} 50000000000\n"));
    CHECK(has(metrics, "# left out: provision_rdma_port_active{device=\"bad\xef\xbf\xbd\",port=\"1\""));
    CHECK(has(metrics, "# left out: provision_rdma_port_active{device=\"ctl\xef\xbf\xbd\",port=\"1\""));
    const std::string promtool = publish_test::installed("promtool");
    if (promtool.empty()) {
        WARN("skipped: promtool is not installed (Debian's package prometheus; scripts/install-deps installs it)");
        return;
    }
    const auto checked = publish_test::promtool_check(promtool, out.file("provision.prom"));
    CHECK(checked.exit_code == 0);
    CHECK(checked.out + checked.err == "");
    reliability::record("metrics", "a node with RDMA ports, two device names alike but for a byte that is not UTF-8, "
                                   "two alike but for a control character",
                        "promtool check metrics passes (the rate in bytes per second); each label set once, the "
                        "later repeat left out with a comment");
}

TEST_CASE("hostile interface lists: thousands of entries, names with control characters", "[network][bounds]") {
    Machine machine;
    std::string text;
    for (int i = 0; i < 20000; ++i) text += fmt::format("v\\x1b[31m{} up,running 10.{}.{}.1/24\n", i, i / 250, i % 250);
    e2e::write_file(machine.dir.file("interfaces"), text);
    e2e::RunOptions options;
    options.kill_after_s = 120;
    options.measure = true;
    const auto result = e2e::run(PROVISION_BINARY,
                                 {"--check", "--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"),
                                  "--site-packages", e2e::site_packages("torch-only")},
                                 machine.env(joined(two_nodes(), {{"NCCL_SOCKET_IFNAME", "nosuch"}})), options);
    CHECK_FALSE(result.killed_by_guard);
    CHECK(result.exit_code == 5);
    e2e::check_memory_bound(result);
    CHECK_FALSE(has(result.err, "\x1b"));
    const auto report = e2e::report(result);
    const std::string words = findings_of(report, "socket_ifname_unmatched")[0]["message"];
    CHECK(has(words, "and 8160 more"));  // 8,192 entries read (4,096 and 4,096 more); 32 named
    CHECK(has(result.err, "11808 interface entries were not read"));
    reliability::record("network input", "20,000 interfaces named with terminal escapes",
                        "bounded: 8,192 read, 32 named in the finding, escapes printed as \\x1b");
}

TEST_CASE("an interface list that cannot be read is a note, never a crash", "[network][bounds]") {
    Machine machine;
    fs::remove(machine.dir.file("interfaces"));
    REQUIRE(::mkfifo(machine.dir.file("interfaces").c_str(), 0600) == 0);
    e2e::RunOptions options;
    options.kill_after_s = 60;
    const auto result = e2e::run(PROVISION_BINARY,
                                 {"--check", "--no-validate", "--json", "--gpu-fixture", e2e::gpu_fixture("h100"),
                                  "--site-packages", e2e::site_packages("torch-only")},
                                 machine.env(two_nodes()), options);
    CHECK_FALSE(result.killed_by_guard);
    CHECK(has(result.err, "the network interfaces cannot be read"));
    const auto report = e2e::report(result);
    CHECK(findings_of(report, "bootstrap_interface_down").size() == 1);
}

TEST_CASE("an elastic job's MIN that is no count from 1 to MAX is a note, and the job is MAX nodes", "[network]") {
    TempDir dir;
    Machine machine;
    for (const char* value : {"a:4", "5:4", "-3:4", "0:4"}) {
        INFO(value);
        const auto result = check(dir, machine.env({{"PET_NNODES", value}, {"PET_NODE_RANK", "1"},
                                                    {"MASTER_ADDR", "10.0.0.1"}}));
        CHECK(result.exit_code == 0);
        const auto report = e2e::report(result);
        CHECK(report["job"]["nodes"] == 4);
        CHECK(has(report.dump(), "an elastic job's MIN must be a whole number from 1 to MAX"));
    }
    const auto good = check(dir, machine.env({{"PET_NNODES", "2:4"}, {"PET_NODE_RANK", "1"},
                                              {"MASTER_ADDR", "10.0.0.1"}}));
    CHECK_FALSE(has(e2e::report(good).dump(), "elastic job's MIN"));
}
