#include "health/actions.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace provision {

std::string_view to_string(Actor actor) {
    switch (actor) {
        case Actor::container: return "container";
        case Actor::image: return "image";
        case Actor::node: return "node";
        case Actor::job: return "job";
        case Actor::none: break;
    }
    return "none";
}

std::string_view to_string(FleetAction action) {
    switch (action) {
        case FleetAction::none: return "NONE";
        case FleetAction::component_reset: return "COMPONENT_RESET";
        case FleetAction::contact_support: return "CONTACT_SUPPORT";
        case FleetAction::run_fielddiag: return "RUN_FIELDDIAG";
        case FleetAction::restart_vm: return "RESTART_VM";
        case FleetAction::restart_bm: return "RESTART_BM";
        case FleetAction::replace_vm: return "REPLACE_VM";
        case FleetAction::run_dcgmeud: return "RUN_DCGMEUD";
        case FleetAction::restart_app: return "RESTART_APP";
        case FleetAction::unknown: break;
    }
    return "UNKNOWN";
}

namespace {

using A = Actor;
using F = FleetAction;

// Where NVSentinel names the action for the same fault, its word is taken:
// DCGM's health errors through its chart's dcgmerrorsmapping.csv
// (NVIDIA/NVSentinel distros/kubernetes/nvsentinel/charts/gpu-health-monitor/),
// its RESET_GPU becoming COMPONENT_RESET and its NODE_REBOOT RESTART_BM here;
// its REPORT_ISSUE and CHECK_* words, which the current RecommendedAction
// lacks, become CONTACT_SUPPORT (a person must look); IGNORE is NONE.
// Placeholders: {gpu} "GPU 0" (or "the GPU"), {smi} " -i 0" (nvidia-smi's
// NVML index, or ""), {shm_gib}, {devices} (Docker's --device options for
// the RDMA devices the container cannot open), {torch_wheel},
// {driver_cuda}, {driver}, {archs}.
constexpr std::array kRows = std::to_array<ActionRow>({
    // Per GPU (recipe/health_signals.h gpu_signals).
    {"uncorrected_ecc", A::node, F::component_reset,  // DCGM_FR_VOLATILE_DBE_DETECTED: RESET_GPU
     "reset {gpu} once its work has drained (nvidia-smi -r{smi}); replace it if the errors come back", "", ""},
    {"retired_pages_pending", A::node, F::none,  // DCGM_FR_PENDING_PAGE_RETIREMENTS: IGNORE
     "reset {gpu} when it is idle (nvidia-smi -r{smi}) so its faulty pages are retired", "", ""},
    {"row_remap_pending", A::node, F::component_reset,  // DCGM_FR_PENDING_ROW_REMAP: RESET_GPU
     "reset {gpu} (nvidia-smi -r{smi}) so the remap takes effect", "", ""},
    {"row_remap_failure", A::node, F::run_fielddiag,  // DCGM_FR_ROW_REMAP_FAILURE: RUN_FIELDDIAG
     "take {gpu} out of service and run NVIDIA's field diagnostic: its memory needs replacing", "", ""},
    {"thermal_slowdown", A::node, F::contact_support,  // DCGM_FR_CLOCKS_EVENT_THERMAL: CHECK_THERMALS
     "check the node's cooling for {gpu} (fans, airflow, inlet temperature)", "", ""},
    {"power_brake_slowdown", A::node, F::none,  // DCGM_FR_CLOCKS_EVENT_POWER: IGNORE
     "check the node's power supply and chassis, which assert the power brake on {gpu}", "", ""},
    {"hw_slowdown", A::node, F::none,  // DCGM_FR_CLOCKS_EVENT_POWER: IGNORE
     "check the node's power and cooling: a hardware protection slows {gpu}", "", ""},
    {"memory_in_use", A::container, F::none,
     "{gpu} is shared with other processes: give the workload a GPU of its own",
     "--gpus device=<the UUID of an idle GPU> (not --gpus all, which hands every container the same GPUs)",
     "resources.limits: {nvidia.com/gpu: 1} (the device plugin gives each pod GPUs of its own)"},
    {"mig_mode", A::node, F::none,
     "where the workload needs the whole GPU, turn MIG off on {gpu} (nvidia-smi{smi} -mig 0, then a GPU reset), "
     "or give the pod a whole GPU (nvidia.com/gpu, not a nvidia.com/mig-* resource)",
     "", ""},
    {"fabric_not_ready", A::node, F::contact_support,  // DCGM_FR_CUDA_FM_NOT_INITIALIZED: REPORT_ISSUE
     "start the nvidia-fabricmanager service on the host, of the driver's version ({driver})", "", ""},
    // The driver's recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION),
    // as docs/DESIGN.md "What to do about a finding" maps it.
    {"gpu_recovery_reset", A::node, F::component_reset, "reset {gpu} (nvidia-smi -r{smi})", "", ""},
    {"gpu_recovery_reboot", A::node, F::restart_bm,
     "reboot the node (RESTART_VM where the node is a virtual machine)", "", ""},
    {"gpu_recovery_drain_p2p", A::job, F::none,
     "keep peer-to-peer traffic off {gpu} until its driver clears the action: NCCL_P2P_DISABLE=1 (written for this "
     "workload; other jobs on the node need it too)",
     "", ""},
    {"gpu_recovery_drain_reset", A::node, F::component_reset,
     "drain the work on {gpu}, then reset it (nvidia-smi -r{smi})", "", ""},
    {"gpu_recovery_unknown", A::node, F::unknown,
     "read {gpu}'s recovery action (nvidia-smi -q{smi}) and follow NVIDIA's guidance for it", "", ""},
    {"retired_pages_limit", A::node, F::run_fielddiag,  // DCGM_FR_RETIRED_PAGES_LIMIT: RUN_FIELDDIAG
     "take {gpu} out of service and run NVIDIA's field diagnostic: its memory needs replacing", "", ""},
    {"row_remap_uncorrectable", A::node, F::none,  // DCGM_FR_UNCORRECTABLE_ROW_REMAP: IGNORE
     "plan {gpu}'s replacement: its memory is wearing out", "", ""},
    {"xid_critical", A::node, F::unknown,  // per Xid: xid_fleet_action
     "act on {gpu}'s Xids as NVIDIA's Xid catalog says (docs.nvidia.com/deploy/xid-errors)", "", ""},

    // Driver faults (driver_fault_classes).
    {"nvml_missing", A::none, F::none, "", "", ""},
    {"nvml_too_old", A::node, F::none, "upgrade the node's NVIDIA driver", "", ""},
    {"driver_not_loaded", A::node, F::restart_bm,
     "load the NVIDIA kernel module on the host (modprobe nvidia), or reboot the node", "", ""},
    {"version_mismatch", A::image, F::none,
     "remove the driver libraries the image ships (libcuda.so.*, libnvidia-ml.so.*): the NVIDIA container runtime "
     "mounts the host driver's ({driver})",
     "", ""},
    {"nvml_init_failed", A::container, F::none, "start the container with the NVIDIA runtime and its GPUs",
     "--gpus all (or --runtime=nvidia)", "runtimeClassName: nvidia, resources.limits: {nvidia.com/gpu: N}"},
    {"nvml_hang", A::node, F::restart_bm, "the driver does not answer: reboot the node", "", ""},
    {"gpu_lost", A::node, F::restart_bm,  // Xid 79, fallen off the bus: RESTART_BM (xiderrorsmapping.csv)
     "reboot the node: {gpu} fell off the bus; replace it if it happens again", "", ""},
    {"gpu_unreadable", A::node, F::unknown, "check {gpu} on the host (nvidia-smi -q{smi})", "", ""},
    {"cuda_problem", A::container, F::none, "give the container the driver's compute libraries",
     "--gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility",
     "env: [{name: NVIDIA_DRIVER_CAPABILITIES, value: \"compute,utility\"}], resources.limits: {nvidia.com/gpu: N}"},

    // The workload's packages (package_signals).
    {"python_mismatch", A::image, F::none,
     "reinstall the package named above for the workload's Python version", "", ""},
    {"torch_cpu_build", A::image, F::none, "install a CUDA build of torch: {torch_wheel}", "", ""},
    {"driver_too_old", A::image, F::none,
     "install packages built for CUDA {driver_cuda} or older: {torch_wheel}; or upgrade the node's driver", "", ""},
    {"no_kernel_image", A::image, F::none, "install a torch built for this GPU's architecture: {torch_wheel}", "", ""},
    {"ptx_jit_only", A::image, F::none, "install a torch with SASS for this GPU's architecture: {torch_wheel}", "", ""},
    {"extension_unusable", A::image, F::none,
     "install the extension named above built for this GPU (TORCH_CUDA_ARCH_LIST=\"{archs}\") and the installed "
     "torch",
     "", ""},
    {"torch_abi_mismatch", A::image, F::none,
     "install the extension's build for the installed torch (its version and C++ ABI)", "", ""},
    {"cuda_compat_libs", A::image, F::none,
     "take /usr/local/cuda*/compat off LD_LIBRARY_PATH and /etc/ld.so.conf.d: the forward-compatibility libraries "
     "do not fit this GPU or driver",
     "", ""},

    // The pod as a whole (pod_signals).
    {"p2p_unavailable", A::node, F::none,
     "where the GPUs should reach each other directly, check the host's IOMMU and PCIe ACS settings", "", ""},
    {"p2p_broken", A::node, F::contact_support,  // DCGM_FR_BROKEN_P2P_*: REPORT_ISSUE
     "check the host's IOMMU (iommu=pt) and PCIe ACS settings, or the driver's known issue named above; "
     "NCCL_P2P_DISABLE=1 is written meanwhile",
     "", ""},
    {"p2p_slow", A::node, F::none, "check the GPUs' links (nvidia-smi topo -m, nvidia-smi nvlink -s)", "", ""},
    {"nvlink_inactive", A::node, F::restart_bm,  // DCGM_FR_NVLINK_DOWN: NODE_REBOOT
     "reboot the node to bring the NVLinks of {gpu} up; check the fabric manager on NVSwitch systems", "", ""},
    {"mixed_gpus", A::container, F::none, "give the workload GPUs of one model",
     "--gpus '\"device=<GPUs of one model>\"'", "nodeSelector: {nvidia.com/gpu.product: <one model>}"},
    {"pcie_degraded", A::node, F::contact_support,  // DCGM_FR_PCIE_GENERATION / _WIDTH: REPORT_ISSUE
     "check {gpu}'s slot and the BIOS's PCIe settings (reseat it where the width is short)", "", ""},
    {"shm_too_small", A::container, F::none, "give /dev/shm {shm_gib} GiB or more",
     "--shm-size={shm_gib}g (or --ipc=host, which shares the host's /dev/shm)",
     "volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: {shm_gib}Gi}}], volumeMounts: [{name: dshm, "
     "mountPath: /dev/shm}]"},
    {"memlock_limited", A::container, F::none, "let NCCL lock memory for RDMA (RLIMIT_MEMLOCK unlimited)",
     "--ulimit memlock=-1",
     "securityContext.capabilities.add: [IPC_LOCK] (no pod-spec field sets the limit itself: the node's runtime "
     "does, containerd with LimitMEMLOCK=infinity)"},
    {"cumem_p2p_failed", A::container, F::none,
     "let the ranks pass cuMem file descriptors (pidfd_getfd needs ptrace access); NCCL_CUMEM_ENABLE=0 is written "
     "meanwhile",
     "--cap-add SYS_PTRACE", "securityContext.capabilities.add: [SYS_PTRACE]"},
    {"cumem_host_failed", A::container, F::none,
     "let NCCL read and set NUMA memory policies (Docker's seccomp profile refuses get_mempolicy without SYS_NICE)",
     "--cap-add SYS_NICE", "securityContext.capabilities.add: [SYS_NICE]"},
    {"nccl_driver_too_old", A::image, F::none,
     "install an NCCL (nvidia-nccl wheel) and a torch built for CUDA {driver_cuda} or older: {torch_wheel}", "", ""},
    {"nccl_all_reduce_failed", A::node, F::unknown,
     "run NCCL's own test on the node (nccl-tests all_reduce_perf) with NCCL_DEBUG=INFO", "", ""},
    {"nvlink_errors", A::node, F::run_fielddiag,  // DCGM_FR_NVLINK_ERROR_CRITICAL: RUN_FIELDDIAG
     "run NVIDIA's field diagnostic on {gpu}'s NVLinks", "", ""},
    {"nvlink_crc_errors", A::node, F::run_fielddiag,  // DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD: RUN_FIELDDIAG
     "run NVIDIA's field diagnostic on {gpu}'s NVLinks", "", ""},
    {"pcie_replays", A::node, F::contact_support,  // DCGM_FR_PCI_REPLAY_RATE: REPORT_ISSUE
     "check {gpu}'s PCIe slot and riser (reseat it)", "", ""},

    // Between nodes (network_signals).
    {"socket_ifname_unmatched", A::job, F::none,
     "set NCCL_SOCKET_IFNAME to an interface this container has (the report's network.interfaces)", "", ""},
    {"bootstrap_interface_down", A::node, F::none, "bring the interface NCCL takes up, or name another", "", ""},
    {"bootstrap_interface_mismatch", A::job, F::none,
     "set NCCL_SOCKET_IFNAME to the interface MASTER_ADDR is reached through (the report's network.route)", "", ""},
    {"rdma_devices_hidden", A::container, F::none, "give the container the host's RDMA devices",
     "{devices} --cap-add IPC_LOCK --ulimit memlock=-1",
     "an RDMA device resource in resources.limits (the RDMA device plugin's, such as rdma/rdma_shared_device_a: 1) "
     "or a resourceClaims entry of a DRA driver for the NICs; securityContext.capabilities.add: [IPC_LOCK]"},
    {"ib_hca_unmatched", A::job, F::none, "set NCCL_IB_HCA to devices this node has (the report's network.rdma)", "",
     ""},
    {"rdma_port_init", A::node, F::contact_support, "bring the RDMA port up: check its cable and the subnet manager",
     "", ""},
    {"rdma_port_slow", A::node, F::contact_support, "check the RDMA port's cable and switch port: it links below its rate",
     "", ""},
    {"rdma_link_layers_mixed", A::job, F::none, "set NCCL_IB_HCA to devices of one link layer (InfiniBand or RoCE)",
     "", ""},
    {"roce_gid_unusable", A::job, F::none,
     "set NCCL_IB_GID_INDEX to a RoCE v2 GID of this node's address (show_gids lists them)", "", ""},
    {"gpudirect_unavailable", A::node, F::none,
     "load nvidia-peermem on the host (modprobe nvidia-peermem; the GPU Operator: driver.rdma.enabled=true)", "", ""},
    {"gpudirect_too_far", A::job, F::none,
     "nothing where throughput suffices; NCCL_NET_GDR_LEVEL=SYS lets NCCL use GPUDirect RDMA across the host bridge",
     "", ""},
    {"pcie_acs_redirect", A::node, F::contact_support,
     "turn PCIe ACS off on the bridges named above (BIOS, or setpci at boot)", "", ""},
    {"nodes_missing", A::job, F::none, "start every node of the job, or set the launcher's node count to those that run",
     "", ""},
    {"rendezvous_failed", A::job, F::none,
     "check that every node reaches MASTER_ADDR and its port, and that all start within the rendezvous's time", "",
     ""},
    // Another node's loss is never this node's to mend: the job restarts
    // without (or with a replacement of) the nodes named.
    {"nodes_lost", A::job, F::none,
     "restart the job, replacing the nodes named (their own reports and logs say why they were lost)", "", ""},
    {"nodes_unreachable", A::job, F::none,
     "let the nodes reach each other on NCCL's interface and ports (firewall, security group, NetworkPolicy), or "
     "set NCCL_SOCKET_IFNAME to an interface they share",
     "", ""},
    {"open_files_limited", A::container, F::none, "raise the container's open-files limit on node 0",
     "--ulimit nofile=1048576:1048576",
     "the container runtime's default ulimits (containerd: LimitNOFILE of its service; CRI-O: default_ulimits)"},
    {"nccl_bandwidth_low", A::job, F::none,
     "check which transport and interface NCCL took (NCCL_DEBUG=INFO): RDMA devices hidden from the container, or a "
     "slow interface, make NCCL fall back",
     "", ""},

    // Multi-node NVLink (fabric_signals).
    {"fabric_unhealthy", A::node, F::contact_support,  // DCGM's fabric health watch: DCGM_FR_FIELD_VIOLATION
     "check {gpu}'s NVLink fabric with the fabric manager and IMEX (nvidia-smi -q{smi}, section Fabric)", "", ""},
    {"imex_channel_missing", A::container, F::none,
     "give the pod an IMEX channel: a DRA ComputeDomain claim (NVIDIA's k8s-dra-driver-gpu), or the channel device "
     "itself",
     "--device /dev/nvidia-caps-imex-channels/channel0 (made on the host with the major of nvidia-caps-imex-channels "
     "in /proc/devices)",
     "a ComputeDomain (resource.nvidia.com/v1beta1) and resourceClaims naming its resourceClaimTemplate in the pod "
     "spec, so the DRA driver injects the channel and runs the IMEX daemons"},
    {"mnnvl_handle_failed", A::container, F::none,
     "let fabric memory be shared: an IMEX channel this container can open and a ComputeDomain whose IMEX daemons "
     "run (nvidia-imex-ctl -N on the node lists them); NCCL_MNNVL_ENABLE=0 is written meanwhile",
     "--device /dev/nvidia-caps-imex-channels/channel0",
     "resourceClaims for the job's ComputeDomain (NVIDIA's DRA driver), in every pod of the job"},
    {"nccl_known_defect", A::image, F::none,
     "install an NCCL the defect named above does not affect; or run with --apply-workarounds "
     "(PROVISION_APPLY_WORKAROUNDS=1), which writes its workaround",
     "", ""},
});

void replace_all(std::string& text, std::string_view key, const std::string& value) {
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
        text.replace(at, key.size(), value);
}

std::string fill(std::string_view form, const Finding& finding, const ActionFacts& facts) {
    std::string text(form);
    replace_all(text, "{gpu}", finding.gpu >= 0 ? fmt::format("GPU {}", finding.gpu) : std::string("the GPU"));
    replace_all(text, "{smi}", finding.nvml_index >= 0 ? fmt::format(" -i {}", finding.nvml_index) : std::string());
    const std::uint64_t gib = std::max<std::uint64_t>(1, (facts.shm_needed_bytes + (1ULL << 30) - 1) >> 30);
    replace_all(text, "{shm_gib}", std::to_string(gib));
    std::string devices;
    for (const auto& node : facts.verbs_nodes) devices += fmt::format("--device /dev/infiniband/{} ", node);
    devices += "--device /dev/infiniband/rdma_cm";
    replace_all(text, "{devices}", devices);
    replace_all(text, "{torch_wheel}",
                facts.torch_wheel.empty() ? std::string("a wheel built for this GPU and this driver's CUDA") : facts.torch_wheel);
    replace_all(text, "{driver_cuda}", facts.driver_cuda.empty() ? std::string("the driver's") : facts.driver_cuda);
    replace_all(text, "{driver}", facts.driver_version.empty() ? std::string("unknown") : facts.driver_version);
    replace_all(text, "{archs}", facts.architectures);
    return text;
}

// What the node's operator does for a GPU's Xids, by NVSentinel's action.
std::string_view xid_words(FleetAction action) {
    switch (action) {
        case F::restart_bm: return "reboot the node";
        case F::component_reset: return "reset {gpu} (nvidia-smi -r{smi})";
        case F::restart_app: return "restart the workload: the fault was its own";
        case F::none: return "nothing for now: watch {gpu}";
        default: return "have {gpu} looked at: the driver's log names the Xid";
    }
}

}  // namespace

int fleet_severity(FleetAction action) {
    switch (action) {
        case F::replace_vm: return 9;
        case F::run_fielddiag: return 8;
        case F::restart_bm: return 7;
        case F::restart_vm: return 6;
        case F::component_reset: return 5;
        case F::run_dcgmeud: return 4;
        case F::contact_support: return 3;
        case F::unknown: return 2;
        case F::restart_app: return 1;
        case F::none: break;
    }
    return 0;
}

// NVSentinel's xiderrorsmapping.csv (its gpu-health-monitor chart) for the
// Xids recipes/policy.toml counts critical; WORKFLOW_* rows (48, 74) are
// UNKNOWN, as NVSentinel's own platform connector maps them.
FleetAction xid_fleet_action(int xid) {
    switch (xid) {
        case 79: return F::restart_bm;
        case 62:
        case 64:
        case 119:
        case 120: return F::component_reset;
        case 56:
        case 57:
        case 58:
        case 65:
        case 73:
        case 81: return F::contact_support;  // UNEXPECTED_ERR_REPORT_ISSUE
        case 68:
        case 69:
        case 80: return F::restart_app;
        case 63:
        case 92: return F::none;  // IGNORE
        default: return F::unknown;
    }
}

const ActionRow* action_row(std::string_view signal) {
    for (const ActionRow& row : kRows)
        if (row.signal == signal) return &row;
    return nullptr;
}

std::vector<Action> actions_for(const std::vector<Finding>& findings, const ActionFacts& facts) {
    std::vector<Action> actions;
    actions.reserve(findings.size());
    for (const Finding& finding : findings) {
        const ActionRow* row = action_row(finding.signal);
        if (!row) {
            actions.push_back({Actor::none, FleetAction::unknown, {}, {}, {}});
            continue;
        }
        Action action{row->actor, row->fleet, fill(row->what, finding, facts), fill(row->docker, finding, facts),
                      fill(row->kubernetes, finding, facts)};
        // The devices are here, the library is not: the image's to fix.
        if (finding.signal == "rdma_devices_hidden" && facts.ibverbs_missing && facts.verbs_nodes.empty())
            action = {Actor::image, FleetAction::none,
                      "install rdma-core's libibverbs (Debian and Ubuntu: libibverbs1 ibverbs-providers)", {}, {}};
        if (finding.signal == "xid_critical") {
            const auto it = facts.xids.find(finding.gpu);
            if (it != facts.xids.end() && !it->second.empty()) {
                FleetAction strongest = FleetAction::none;
                for (int xid : it->second)
                    if (fleet_severity(xid_fleet_action(xid)) > fleet_severity(strongest)) strongest = xid_fleet_action(xid);
                action.fleet = strongest;
                action.what = fmt::format("{} (NVSentinel's action for Xid {})",
                                          fill(xid_words(strongest), finding, facts), fmt::join(it->second, ", "));
            }
        }
        actions.push_back(std::move(action));
    }
    return actions;
}

}  // namespace provision
