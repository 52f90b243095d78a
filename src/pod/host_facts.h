// What the host lets NCCL's memory paths do, read from files and one system
// call, without root: the NUMA nodes that have memory but no CPUs
// (/sys/devices/system/node: ranks then disagree about host memory,
// NVIDIA/nccl#2190), whether the process runs under a seccomp filter
// (/proc/self/status) and whether it refuses get_mempolicy(2) (Docker's
// default profile does without CAP_SYS_NICE: cuMem host memory then fails),
// and each GPU's IOMMU group type (/sys/bus/pci/devices/<bus id>/iommu_group/
// type: identity passes DMA through, DMA and DMA-FQ translate it, and with
// PCIe ACS on a translating IOMMU redirects peer traffic).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace provision {

struct HostFacts {
    std::vector<int> numa_nodes_without_cpus;  // nodes with memory and no CPU
    int seccomp_mode = 0;                      // 0 none, 1 strict, 2 filter
    bool mempolicy_refused = false;            // get_mempolicy(2) answered EPERM
    std::map<std::string, std::string> iommu_types;  // by PCI bus id: "identity", "DMA", "DMA-FQ", "none"
};

struct HostPaths {
    std::string sysfs = "/sys";
    std::string proc_status = "/proc/self/status";
};

HostFacts read_host_facts(const std::vector<std::string>& gpu_bus_ids, const HostPaths& paths = {});

// Whether an IOMMU group type translates DMA addresses ("DMA", "DMA-FQ").
bool translates_dma(const std::string& iommu_type);

}  // namespace provision
