#include "health/findings.h"

#include <algorithm>

#include <fmt/format.h>

namespace provision {
namespace {

std::string count_of(std::uint64_t count, const char* one, const char* many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

// What an Xid means, for the critical ones (NVIDIA's Xid catalog,
// docs.nvidia.com/deploy/xid-errors; the list is Azure's: recipes/policy.toml).
std::string_view xid_meaning(int xid) {
    switch (xid) {
        case 48: return "double-bit ECC error";
        case 56: return "display engine error";
        case 57: return "error programming video memory interface";
        case 58: return "unstable video memory interface detected";
        case 62: return "internal micro-controller halt";
        case 63: return "ECC page retirement or row remapping recording event";
        case 64: return "ECC page retirement or row remapper recording failure";
        case 65: return "video processor exception";
        case 68: return "NVDEC0 exception";
        case 69: return "graphics engine class error";
        case 73: return "NVENC2 error";
        case 74: return "NVLink error";
        case 79: return "GPU has fallen off the bus";
        case 80: return "corrupted data sent to the GPU";
        case 81: return "VGA subsystem error";
        case 92: return "high single-bit ECC error rate";
        case 119: return "GSP RPC timeout";
        case 120: return "GSP error";
        default: return "an Xid the policy counts as critical";
    }
}

// The signals DCGM's health watches judge, at its limits (recipes/policy.toml).
template <typename Add>
void dcgm_findings(const Gpu& gpu, const std::string& who, const HealthPolicy& policy, Add add) {
    const GpuHealth& health = gpu.health;
    if (health.recovery_action) {
        const std::string asked = fmt::format("{} awaits recovery action {}, its driver says", who,
                                              to_string(*health.recovery_action));
        switch (*health.recovery_action) {
            case RecoveryAction::none: break;
            case RecoveryAction::gpu_reset:
                add("gpu_recovery_reset", asked + ": the GPU needs a reset (nvidia-smi -r) before it can be trusted");
                break;
            case RecoveryAction::node_reboot: add("gpu_recovery_reboot", asked + ": the node needs a reboot"); break;
            case RecoveryAction::drain_p2p:
                add("gpu_recovery_drain_p2p",
                    asked + ": peer-to-peer traffic to and from it must stop (NCCL_P2P_DISABLE=1 is written); the "
                            "GPU still serves work of its own");
                break;
            case RecoveryAction::drain_and_reset:
                add("gpu_recovery_drain_reset", asked + ": let its work end, then reset the GPU");
                break;
            case RecoveryAction::unknown: add("gpu_recovery_unknown", asked); break;
        }
    }
    if (health.retired_pages && *health.retired_pages >= policy.retired_pages_max)
        add("retired_pages_limit",
            fmt::format("{} has retired {} memory pages, DCGM's limit being {}: its memory is failing; the GPU needs "
                        "replacing",
                        who, *health.retired_pages, policy.retired_pages_max));
    if (health.uncorrectable_remapped_rows && *health.uncorrectable_remapped_rows >= policy.uncorrectable_remapped_rows_max)
        add("row_remap_uncorrectable",
            fmt::format("{} has remapped {} memory rows for uncorrectable errors, DCGM's limit being {}: its memory "
                        "is wearing out",
                        who, *health.uncorrectable_remapped_rows, policy.uncorrectable_remapped_rows_max));
    if (health.xids) {
        std::vector<std::string> critical;
        for (const XidEvent& event : *health.xids)
            if (std::find(policy.critical_xids.begin(), policy.critical_xids.end(), event.xid) !=
                    policy.critical_xids.end() &&
                critical.size() < 8)
                critical.push_back(fmt::format("Xid {} ({})", event.xid, xid_meaning(event.xid)));
        if (!critical.empty())
            add("xid_critical", fmt::format("{} has had {} (the driver's log): it needs attention (a reset, a "
                                            "reboot or a replacement, as the Xid says) before it is trusted with a job",
                                            who, fmt::join(critical, ", ")));
    }
}

// One finding per GPU signal that fired, in recipe/health_signals.h's order.
void gpu_findings(const Gpu& gpu, const std::string& driver_version, const HealthPolicy& policy,
                  std::vector<Finding>& out) {
    const GpuHealth& health = gpu.health;
    const std::string who = fmt::format("GPU {} ({})", gpu.index, gpu.name);
    auto add = [&](const char* signal, std::string words) {
        out.push_back({gpu.index, gpu.nvml_index, signal, policy.level(signal), std::move(words)});
    };
    if (health.uncorrected_ecc_errors.value_or(0) > 0)
        add("uncorrected_ecc",
            fmt::format("{} has had {} since the driver loaded: its memory may corrupt results; the GPU needs a "
                        "reset, and replacing if the errors come back",
                        who, count_of(*health.uncorrected_ecc_errors, "uncorrected ECC memory error",
                                     "uncorrected ECC memory errors")));
    if (health.retired_pages_pending.value_or(false))
        add("retired_pages_pending",
            fmt::format("{} has faulty memory pages waiting to be retired: they are retired at the next GPU reset "
                        "or node reboot",
                        who));
    if (health.row_remap_pending.value_or(false))
        add("row_remap_pending",
            fmt::format("{} has a faulty memory row waiting to be remapped: the remap takes effect at the next GPU "
                        "reset or node reboot",
                        who));
    if (health.row_remap_failure.value_or(false))
        add("row_remap_failure",
            fmt::format("{} could not remap a faulty memory row: its memory cannot be trusted; the GPU needs "
                        "replacing",
                        who));
    if (health.thermal_slowdown.value_or(false))
        add("thermal_slowdown",
            fmt::format("{} is slowing its clocks because it is too hot: expect lower throughput; check the node's "
                        "cooling",
                        who));
    if (health.power_brake_slowdown.value_or(false))
        add("power_brake_slowdown",
            fmt::format("{} is held back by the power brake (asserted by the node's power supply or chassis): "
                        "expect much lower throughput",
                        who));
    if (health.hw_slowdown.value_or(false))
        add("hw_slowdown",
            fmt::format("{} is slowed by a hardware protection (power draw too high, or similar): expect lower "
                        "throughput",
                        who));
    const unsigned processes = health.other_processes.value_or(0);
    const std::uint64_t used = health.memory_used_mib.value_or(0);
    if (processes > 0 || (health.memory_used_mib && used >= policy.memory_in_use_min_mib)) {
        const std::string by =
            processes > 0 ? fmt::format(" by {}", count_of(processes, "other process", "other processes")) : "";
        add("memory_in_use",
            fmt::format("{} already has {} MiB of memory in use{} before the workload starts: something else "
                        "shares this GPU, so less memory is free",
                        who, used, by));
    }
    if (health.mig_mode.value_or(false))
        add("mig_mode",
            fmt::format("{} is in MIG mode: the workload gets a slice of the GPU (a MIG instance), not the whole "
                        "GPU",
                        who));
    if (gpu.fabric && (gpu.fabric->state == FabricState::not_started || gpu.fabric->state == FabricState::in_progress ||
                       (gpu.fabric->state == FabricState::completed && gpu.fabric->status != 0)))
        add("fabric_not_ready",
            fmt::format("{} cannot run CUDA: its NVSwitch fabric is {} (cuInit answers error 802, 'system not yet "
                        "initialized', until the host's fabric manager has set the fabric up); start the "
                        "nvidia-fabricmanager service on the host, of the same version as the driver{}",
                        who,
                        gpu.fabric->state == FabricState::completed
                            ? fmt::format("set up with an error (NVML status {})", gpu.fabric->status)
                            : std::string(to_string(gpu.fabric->state)),
                        driver_version.empty() ? std::string() : " (" + driver_version + ")"));
    dcgm_findings(gpu, who, policy, add);
}

int visible_index(const Inventory& inventory, int nvml_index) {
    if (nvml_index < 0) return -1;
    for (const Gpu& gpu : inventory.gpus)
        if (gpu.nvml_index == nvml_index) return gpu.index;
    return -1;
}

}  // namespace

std::vector<Finding> evaluate_health(const Inventory& inventory, const HealthPolicy& policy) {
    std::vector<Finding> findings;
    bool nvml_failed = false;
    for (const DriverFault& fault : inventory.driver_faults) {
        const std::string key = driver_fault_key(fault.kind);
        findings.push_back({visible_index(inventory, fault.nvml_index), fault.nvml_index, key, policy.level(key),
                            fault.words});
        if (fault.kind != DriverFaultKind::nvml_missing) nvml_failed = true;
    }
    // Detection flags a driver problem without an NVML fault only for libcuda.
    if (inventory.driver_problem && !nvml_failed)
        findings.push_back({-1, -1, "cuda_problem", policy.level("cuda_problem"),
                            "the CUDA driver (libcuda) failed: CUDA programs in this container may not see every "
                            "GPU (the notes say why)"});
    for (const Gpu& gpu : inventory.gpus) gpu_findings(gpu, inventory.driver.version, policy, findings);
    return findings;
}

HealthLevel worst_level(const std::vector<Finding>& findings) {
    HealthLevel worst = HealthLevel::ok;
    for (const Finding& finding : findings) worst = std::max(worst, finding.level);
    return worst;
}

}  // namespace provision
