// The names the health policy weighs: the health signals read on each GPU,
// the classes of driver faults met during detection, what was found about
// the workload's packages, and what was found about the pod as a whole.  Each is a key of the recipes' [policy]
// table (recipes/policy.toml): the recipe loader refuses any other key, and
// src/health/ finds and weighs them.
#pragma once

#include <string>
#include <vector>

namespace provision::health {

// Per GPU, from NVML (GpuHealth).
inline const std::vector<std::string>& gpu_signals() {
    static const std::vector<std::string> names = {
        "uncorrected_ecc", "retired_pages_pending", "row_remap_pending", "row_remap_failure", "thermal_slowdown",
        "power_brake_slowdown", "hw_slowdown", "memory_in_use", "mig_mode", "fabric_not_ready",
        "gpu_recovery_reset", "gpu_recovery_reboot", "gpu_recovery_drain_p2p", "gpu_recovery_drain_reset",
        "gpu_recovery_unknown", "retired_pages_limit", "row_remap_uncorrectable", "xid_critical"};
    return names;
}

// From detection: NVML's fault classes (DriverFaultKind) and libcuda's
// failures, which detection reports as a driver problem.
inline const std::vector<std::string>& driver_fault_classes() {
    static const std::vector<std::string> names = {
        "nvml_missing", "nvml_too_old", "driver_not_loaded", "version_mismatch", "nvml_init_failed",
        "nvml_hang",    "gpu_lost",     "gpu_unreadable",    "cuda_problem"};
    return names;
}

// From the workload's Python packages: an installed package that cannot
// serve (the mechanisms needing it are refused either way; the level says
// what that does to the verdict).
inline const std::vector<std::string>& package_signals() {
    static const std::vector<std::string> names = {
        "python_mismatch",    "torch_cpu_build",    "driver_too_old",  "no_kernel_image",
        "ptx_jit_only",       "extension_unusable", "torch_abi_mismatch", "cuda_compat_libs"};
    return names;
}

// From the pod as a whole: the links between its GPUs (NVML's topology,
// the copy check or the recipes' known-broken table), its GPUs' NVLink and
// PCIe links, and the container's limits.
inline const std::vector<std::string>& pod_signals() {
    static const std::vector<std::string> names = {
        "p2p_unavailable", "p2p_broken",    "p2p_slow",          "nvlink_inactive",   "mixed_gpus",
        "pcie_degraded",   "shm_too_small", "memlock_limited",   "cumem_p2p_failed",  "cumem_host_failed",
        "nccl_driver_too_old", "nccl_all_reduce_failed", "nvlink_errors", "nvlink_crc_errors", "pcie_replays"};
    return names;
}

// Between the nodes of a job (src/network/): the interface NCCL takes, the
// RDMA devices and ports, GPUDirect RDMA, and provision's own rendezvous.
inline const std::vector<std::string>& network_signals() {
    static const std::vector<std::string> names = {
        "socket_ifname_unmatched", "bootstrap_interface_down", "bootstrap_interface_mismatch",
        "rdma_devices_hidden",     "ib_hca_unmatched",         "rdma_port_init",
        "rdma_port_slow",          "rdma_link_layers_mixed",   "roce_gid_unusable",
        "gpudirect_unavailable",   "gpudirect_too_far",        "pcie_acs_redirect",
        "nodes_missing",           "rendezvous_failed",        "nodes_lost",
        "nodes_unreachable",       "open_files_limited",       "nccl_bandwidth_low"};
    return names;
}

// Multi-node NVLink (src/fabric/): the fabric's health as NVML reports it,
// the IMEX channels in the container, NCCL's own check of fabric handles,
// and the recipes' known NCCL defects on this path.
inline const std::vector<std::string>& fabric_signals() {
    static const std::vector<std::string> names = {"fabric_unhealthy", "imex_channel_missing", "mnnvl_handle_failed",
                                                   "nccl_known_defect"};
    return names;
}

}  // namespace provision::health
