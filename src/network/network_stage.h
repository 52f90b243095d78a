// The network stage: on a job over several nodes, the network NCCL will
// use between them, read as NCCL reads it before NCCL starts (files, one
// UDP socket that sends nothing, and where libibverbs is installed and no
// peer-memory module is loaded, NCCL's dma-buf probe), judged into findings
// weighed by the recipes' [policy].  On one node it runs only for the
// node's labels and metrics, and then reads the RDMA and GPUDirect facts
// alone.  Every root it reads can be replaced, so tests stand in for sysfs,
// /dev, /proc, the interface list and the route.
#pragma once

#include <future>
#include <optional>
#include <string>

#include "gpu/inventory.h"
#include "network/gid_index.h"
#include "network/job_shape.h"
#include "network/network_report.h"
#include "network/socket_interfaces.h"
#include "recipe/recipe.h"

namespace provision::network {

// NCCL's own variables the stage reads, as the workload will get them.
struct NcclNetworkVariables {
    NcclSocketVariables socket;
    GidVariables gid;
    std::optional<std::string> ib_hca;         // NCCL_IB_HCA
    std::optional<std::string> ib_disable;     // NCCL_IB_DISABLE
    std::optional<std::string> net;            // NCCL_NET ("IB", "Socket")
    std::optional<std::string> dmabuf_enable;  // NCCL_DMABUF_ENABLE
    std::optional<std::string> gdr_level;      // NCCL_NET_GDR_LEVEL
    std::optional<std::string> gdr_c2c;        // NCCL_NET_GDR_C2C
    std::optional<std::string> topo_file;      // NCCL_TOPO_FILE
};

// Where the stage reads; the defaults are the machine's.
struct NetworkRoots {
    std::string sysfs = "/sys";
    std::string dev = "/dev";
    std::string proc = "/proc";
    std::optional<std::string> interfaces_file;  // a stand-in for getifaddrs (interfaces.h's format)
    std::optional<std::string> route_local;      // a stand-in for the kernel's source address, or "unreachable"
    std::string ibverbs_library = "libibverbs.so.1";
};

struct NetworkSettings {
    NetworkScope scope = NetworkScope::job;
    JobShape job;
    NcclNetworkVariables nccl;
    NetworkRoots roots;
};

// Everything that needs no GPU: interfaces, the route, RDMA devices, peer
// memory, dma-buf.  Bounded in time and memory whatever the files hold.
NetworkReport read_network(const NetworkSettings& settings);

// The GPUs against the NICs, and the findings (for a job; none for node facts).
void judge_network(NetworkReport& report, const Inventory& inventory, const HealthPolicy& policy,
                   const NetworkSettings& settings);

// read_network on a thread of its own from now: its reads go by while the
// recipes and the workload's Python are read.
std::future<NetworkReport> start_network_reading(const NetworkSettings& settings);

}  // namespace provision::network
