#include "gpu/inventory.h"

namespace provision {

std::string_view to_string(FabricHealth health) {
    switch (health) {
        case FabricHealth::healthy: return "healthy";
        case FabricHealth::unhealthy: return "unhealthy";
        case FabricHealth::limited_capacity: return "limited-capacity";
        case FabricHealth::unknown: break;
    }
    return "unknown";
}

std::string_view to_string(FabricState state) {
    switch (state) {
        case FabricState::not_started: return "not-started";
        case FabricState::in_progress: return "in-progress";
        case FabricState::completed: return "completed";
        case FabricState::not_supported: break;
    }
    return "not-supported";
}

std::string_view to_string(ComputeMode mode) {
    switch (mode) {
        case ComputeMode::exclusive_process: return "exclusive-process";
        case ComputeMode::prohibited: return "prohibited";
        case ComputeMode::shared: break;
    }
    return "default";
}

std::optional<ComputeMode> parse_compute_mode(std::string_view text) {
    for (const ComputeMode mode : {ComputeMode::shared, ComputeMode::exclusive_process, ComputeMode::prohibited})
        if (text == to_string(mode)) return mode;
    return std::nullopt;
}

std::string_view to_string(RecoveryAction action) {
    switch (action) {
        case RecoveryAction::none: return "none";
        case RecoveryAction::gpu_reset: return "gpu-reset";
        case RecoveryAction::node_reboot: return "node-reboot";
        case RecoveryAction::drain_p2p: return "drain-p2p";
        case RecoveryAction::drain_and_reset: return "drain-and-reset";
        case RecoveryAction::unknown: break;
    }
    return "unknown";
}

std::optional<RecoveryAction> parse_recovery_action(std::string_view text) {
    for (const RecoveryAction action : {RecoveryAction::none, RecoveryAction::gpu_reset, RecoveryAction::node_reboot,
                                        RecoveryAction::drain_p2p, RecoveryAction::drain_and_reset, RecoveryAction::unknown})
        if (text == to_string(action)) return action;
    return std::nullopt;
}

RecoveryAction recovery_action_of(long long value) {
    switch (value) {  // nvmlDeviceGpuRecoveryAction_t
        case 0: return RecoveryAction::none;
        case 1: return RecoveryAction::gpu_reset;
        case 2: return RecoveryAction::node_reboot;
        case 3: return RecoveryAction::drain_p2p;
        case 4: return RecoveryAction::drain_and_reset;
        default: return RecoveryAction::unknown;
    }
}

bool GpuHealth::any() const {
    return uncorrected_ecc_errors || retired_pages_pending || row_remap_pending || row_remap_failure ||
           thermal_slowdown || power_brake_slowdown || hw_slowdown || memory_used_mib || other_processes || mig_mode ||
           compute_mode || recovery_action || retired_pages || uncorrectable_remapped_rows || link_errors.any() ||
           xids;
}

const char* driver_fault_key(DriverFaultKind kind) {
    switch (kind) {
        case DriverFaultKind::nvml_missing: return "nvml_missing";
        case DriverFaultKind::nvml_too_old: return "nvml_too_old";
        case DriverFaultKind::driver_not_loaded: return "driver_not_loaded";
        case DriverFaultKind::version_mismatch: return "version_mismatch";
        case DriverFaultKind::nvml_init_failed: return "nvml_init_failed";
        case DriverFaultKind::nvml_hang: return "nvml_hang";
        case DriverFaultKind::gpu_lost: return "gpu_lost";
        case DriverFaultKind::gpu_unreadable: return "gpu_unreadable";
    }
    return "unknown";
}

}  // namespace provision
