// What the detect stage found: the driver and the GPUs the workload will see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compute_capability.h"
#include "gpu/gpu_links.h"
#include "gpu/xid_log.h"

namespace provision {

// Who may create CUDA contexts on a GPU (nvmlComputeMode_t): anyone; one
// process at a time (EXCLUSIVE_PROCESS, and the deprecated EXCLUSIVE_THREAD);
// no one (PROHIBITED).
enum class ComputeMode { shared, exclusive_process, prohibited };
std::string_view to_string(ComputeMode mode);  // "default", "exclusive-process", "prohibited"
std::optional<ComputeMode> parse_compute_mode(std::string_view text);

// What the driver asks to be done for a GPU to recover
// (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, nvml.h nvmlDeviceGpuRecoveryAction_t);
// `unknown`: a value this build does not know.
enum class RecoveryAction { none, gpu_reset, node_reboot, drain_p2p, drain_and_reset, unknown };
std::string_view to_string(RecoveryAction action);  // "none", "gpu-reset", "node-reboot", "drain-p2p", ...
std::optional<RecoveryAction> parse_recovery_action(std::string_view text);
RecoveryAction recovery_action_of(long long value);  // NVML's number

// Health signals NVML reports for one GPU.  Each is empty where it could not
// be read: a driver without the function, a GPU without the feature
// (NVML_ERROR_NOT_SUPPORTED), or a simulated GPU whose fixture leaves it out.
struct GpuHealth {
    std::optional<std::uint64_t> uncorrected_ecc_errors;  // volatile count, since the driver loaded
    std::optional<bool> retired_pages_pending;            // pre-Ampere: pages await retirement (reset)
    std::optional<bool> row_remap_pending;                // Ampere and newer: a remap awaits a reset
    std::optional<bool> row_remap_failure;                // a row could not be remapped
    std::optional<bool> thermal_slowdown;                 // clocks cut for temperature (software or hardware)
    std::optional<bool> power_brake_slowdown;             // the external power brake is asserted
    std::optional<bool> hw_slowdown;                      // hardware slowdown not explained by the two above
    std::optional<std::uint64_t> memory_used_mib;         // in use at start (reserved memory excluded where known)
    std::optional<unsigned> other_processes;              // compute processes already on the GPU
    std::optional<bool> mig_mode;                         // MIG mode currently enabled
    std::optional<ComputeMode> compute_mode;
    // The signals DCGM's health watches judge (NVIDIA/DCGM
    // modules/health/DcgmHealthWatch.cpp), with its limits in recipes/policy.toml.
    std::optional<RecoveryAction> recovery_action;
    std::optional<std::uint64_t> retired_pages;            // retired for single- and double-bit errors, pending included
    std::optional<std::uint64_t> uncorrectable_remapped_rows;  // rows remapped for uncorrectable errors
    LinkErrorCounts link_errors;                           // at start
    // The Xid events the driver logged for this GPU since boot (xid_log.h);
    // empty when the kernel's log could not be read ("not read", not "none").
    std::optional<std::vector<XidEvent>> xids;

    bool any() const;  // true when at least one signal was read
};

// The NVSwitch fabric as NVML reports it for a GPU (nvmlDeviceGetGpuFabricInfoV):
// on HGX/DGX machines CUDA does not start (cuInit answers 802) until the
// host's fabric manager has set the fabric up.
enum class FabricState { not_supported, not_started, in_progress, completed };
std::string_view to_string(FabricState state);  // "not-supported", "not-started", "in-progress", "completed"

// NVML's healthSummary (nvmlGpuFabricInfo_v3 and later); unknown where the
// driver's struct has none.
enum class FabricHealth { unknown, healthy, unhealthy, limited_capacity };
std::string_view to_string(FabricHealth health);  // "unknown", "healthy", "unhealthy", "limited-capacity"

// One clique of a GPU (nvmlGpuFabricInfo_v4 cliques[]): its type
// (NVML_GPU_FABRIC_CLIQUE_TYPE_*) and the id the fabric manager gave it.
struct FabricClique {
    unsigned type = 0;
    unsigned id = 0;
};

struct GpuFabric {
    FabricState state = FabricState::not_supported;
    int status = 0;  // nvmlReturn_t of the set-up, meaningful once completed (0: success)
    // Multi-node NVLink as NCCL reads it (NVIDIA/nccl src/mnnvl.cc): GPUs of
    // one cluster UUID and clique id share an NVLink domain beyond the node;
    // a cluster UUID of zero (HGX H100/H200) is no such domain.
    std::string cluster_uuid{};       // 32 hex digits; empty: zero (or not read)
    unsigned clique_id = 0;
    unsigned version = 1;             // the struct version the driver answered (1 to 4)
    std::optional<unsigned> health_mask{};  // v2 and later: 2-bit fields (fabric/fabric_health.h)
    FabricHealth health = FabricHealth::unknown;
    std::vector<FabricClique> cliques{};  // v4: by type

    bool multi_node() const { return !cluster_uuid.empty(); }
};

struct Gpu {
    int index = 0;               // index as the workload will see it (CUDA order)
    int nvml_index = -1;         // NVML's index on the host, -1 when unknown
    std::string name{};
    std::string uuid{};          // "GPU-..."; may be empty for fixtures
    ComputeCapability compute_capability{};
    std::uint64_t memory_mib = 0;
    std::string architecture{};  // filled by classify; empty until then
    std::string family{};        // the architecture's family ("blackwell"), filled by classify
    GpuHealth health{};
    std::optional<NvLinkCount> nvlinks{};  // set where NVML lists NVLink links for the GPU
    unsigned nvlink_generation = 0;        // 1 to 5 from NVML's NVLink version; 0 unknown
    std::optional<PcieLink> pcie{};        // set where NVML reports the link (all four figures)
    std::string pci_bus_id{};              // "0000:1b:00.0" as sysfs names it; empty when unknown
    std::optional<GpuFabric> fabric{};     // where the driver reports it
};

struct Driver {
    bool present = false;
    std::string version;         // as NVML reports it, e.g. "580.159.04"
    std::string cuda;            // highest CUDA version it supports, e.g. "13.0"
};

// Classes of driver faults met during detection, so the recipes' policy
// ([policy] in recipes/policy.toml) can weigh them.
enum class DriverFaultKind {
    nvml_missing,       // no NVML library: a machine without the NVIDIA driver
    nvml_too_old,       // NVML lacks a function detection needs
    driver_not_loaded,  // nvmlInit: NVML_ERROR_DRIVER_NOT_LOADED
    version_mismatch,   // nvmlInit: NVML_ERROR_LIB_RM_VERSION_MISMATCH
    nvml_init_failed,   // nvmlInit failed otherwise (no permission, ...)
    nvml_hang,          // NVML did not answer within the time limit
    gpu_lost,           // a GPU fell off the bus
    gpu_unreadable,     // a query failed for one GPU
};

// The [policy] key of a fault class: "driver_not_loaded", ...
const char* driver_fault_key(DriverFaultKind kind);

struct DriverFault {
    DriverFaultKind kind;
    int nvml_index = -1;  // the GPU it concerns (NVML's index), -1 for the driver as a whole
    std::string words;    // what happened, for a pod user
};

enum class InventorySource { fixture, driver, none };

struct Inventory {
    InventorySource source = InventorySource::none;
    Driver driver;
    std::vector<Gpu> gpus;       // only the GPUs the workload will see
    std::vector<GpuPair> pairs;  // every pair of them, in CUDA's order (gpu_links.h)
    int hidden_gpus = 0;         // GPUs on the host hidden by CUDA_VISIBLE_DEVICES
    std::vector<std::string> notes;  // what a user should know (library missing, ...)
    bool driver_problem = false;     // an NVIDIA library is there but failed: GPUs may be missing (see notes)
    std::vector<DriverFault> driver_faults;  // NVML's faults, by class
    std::string kernel_log_unread;  // why the kernel's log (each GPU's Xids) was not read; empty when it was
    // --repeat: where the kernel's log was not read, each GPU's Xids are the
    // NVML events since this time (seconds since the epoch; xid_events.h).
    std::optional<std::int64_t> xid_events_since;

    bool simulated() const { return source == InventorySource::fixture; }
};

}  // namespace provision
