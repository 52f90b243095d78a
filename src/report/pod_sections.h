// The pod's part of the report (schema in docs/DESIGN.md): each GPU's
// NVLinks and PCIe link, the links between GPUs, the container's limits,
// and their lines in the summary and the --explain matrix.
#pragma once

#include <optional>
#include <string>

#include <toml++/toml.h>

#include "gpu/inventory.h"
#include "pod/pod.h"

namespace provision {

// A value the JSON writer prints as `null` (toml has none; report.cpp's
// writer turns this NaN, the only bare one in a report, into null).
void put_json_null(toml::table& table, const std::string& key);

// Adds "nvlinks" and "pcie" to one entry of "gpus", where known.
void add_gpu_links(toml::table& entry, const Gpu& gpu, const PodReport& pod);

// Adds "fabric" (NVML's NVSwitch fabric state) and "nccl_host_memory" (the
// cuMem host memory check) to one entry of "gpus", where known.
void add_gpu_fabric_and_memory(toml::table& entry, const Gpu& gpu, const PodReport& pod);

// "nccl": the workload's NCCL and the paths it takes; none without NCCL.
std::optional<toml::table> nccl_table(const PodReport& pod);

// "links": one entry per pair of visible GPUs, in CUDA's order.
toml::array links_array(const PodReport& pod);

// "container": shm_bytes (null: no /dev/shm), memlock_bytes (null:
// unlimited; only where RDMA devices exist), rdma_devices.
toml::table container_table(const ContainerLimits& limits);
// Adds "numa_nodes_without_cpus" to "container".
void add_host_facts(toml::table& container, const HostFacts& host);

// Summary lines: what provision tells NCCL and why (empty when nothing).
std::string peer_access_line(const PodReport& pod);

// --explain: each GPU's links, the matrix of paths and results (like
// `nvidia-smi topo -m`) for two GPUs or more, and the container's limits.
std::string explain_pod(const Inventory& inventory, const PodReport& pod);

}  // namespace provision
