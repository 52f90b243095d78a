// A stand-in for libnvidia-ml.so.1 that reports the machine of
// PROVISION_FAKE_GPU_FIXTURE (see fake_machine.h).  Built twice: as today's
// driver, and with FAKE_OLD_DRIVER as a driver that predates
// nvmlDeviceGetCudaComputeCapability, nvmlSystemGetCudaDriverVersion_v2 and
// the health queries (ECC, retired pages, row remapping, clock event
// reasons, nvmlDeviceGetMemoryInfo_v2, running processes, MIG mode) and the
// topology calls (peer access, PCIe relation, NVLinks, PCIe links).
//
// Health queries answer from the GPU's [gpus.health] table; a signal the
// table leaves out reads as healthy (no errors, nothing pending, no
// slowdown, no memory in use, no process, MIG off); the topology calls
// from the GPUs' nvlinks and pcie and the [[links]] (see below).  A failing call in
// [faults] with error = 3 makes one answer NVML_ERROR_NOT_SUPPORTED.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <unistd.h>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_machine.h"
#include "gpu/nvml_api.h"

namespace nvml = provision::nvml;

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::mutex state_mutex;
std::shared_ptr<const fake::Machine> state;  // set between init and shutdown

std::shared_ptr<const fake::Machine> machine() {
    std::lock_guard lock(state_mutex);
    return state;
}

// Device handles are GPU positions + 1, so that none is null.
nvml::Device handle_of(std::size_t gpu) { return reinterpret_cast<nvml::Device>(static_cast<std::uintptr_t>(gpu + 1)); }

// The GPU behind a handle, or the error the call must return.
nvml::Return lookup(nvml::Device device, const char* function, std::shared_ptr<const fake::Machine>& out,
                    std::size_t& gpu) {
    out = machine();
    if (!out) return nvml::ERROR_UNINITIALIZED;
    gpu = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(device)) - 1;
    if (!device || gpu >= out->fixture.gpus.size()) return nvml::ERROR_INVALID_ARGUMENT;
    if (out->lost(gpu)) return nvml::ERROR_GPU_IS_LOST;
    if (const int error = out->failure(function, gpu)) return static_cast<nvml::Return>(error);
    return nvml::SUCCESS;
}

constexpr std::uint64_t reserved_mib = 480;  // what driver 580 keeps on an H100

// Unused in the old driver's build, which answers none of the health calls.
[[maybe_unused]] const provision::GpuHealth& health_of(const fake::Machine& machine, std::size_t gpu) {
    return machine.fixture.gpus[gpu].health;
}

nvml::Return copy_text(const std::string& text, char* buffer, unsigned length) {
    if (!buffer) return nvml::ERROR_INVALID_ARGUMENT;
    if (text.size() + 1 > length) return nvml::ERROR_INSUFFICIENT_SIZE;
    std::memcpy(buffer, text.c_str(), text.size() + 1);
    return nvml::SUCCESS;
}

}  // namespace

// Like the driver's NVML, the library opens a descriptor when it is loaded
// and never closes it: a process that loads and unloads it over and over
// piles them up.
__attribute__((constructor)) static void open_event_descriptor() { [[maybe_unused]] const int fd = eventfd(0, EFD_CLOEXEC); }

// Appends "CALL PID" to the file $VARIABLE names, if set.
static void record_call(const char* variable, const char* call) {
    const char* log = std::getenv(variable);
    if (!log || !*log) return;
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string line = std::string(call) + " " + std::to_string(getpid()) + "\n";
    [[maybe_unused]] const ssize_t written = write(fd, line.data(), line.size());
    close(fd);
}

// Each nvmlInit_v2 is logged to $PROVISION_FAKE_NVML_INIT_LOG, so a test can
// count the rounds of --repeat.
static void record_nvml_init() { record_call("PROVISION_FAKE_NVML_INIT_LOG", "nvmlInit"); }

FAKE_EXPORT nvml::Return nvmlInit_v2() {
    record_nvml_init();
    auto loaded = fake::load_machine("fake NVML");
    if (!loaded) return nvml::ERROR_UNKNOWN;
    if (loaded->nvml_init_delay_ms > 0) {
        // A hung driver: by the time this returns the caller has given up,
        // so leave the shared state alone.
        std::this_thread::sleep_for(std::chrono::milliseconds(loaded->nvml_init_delay_ms));
        return nvml::ERROR_TIMEOUT;
    }
    if (loaded->nvml_init_error) return static_cast<nvml::Return>(loaded->nvml_init_error);
    if (loaded->nvml_init_slow_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(loaded->nvml_init_slow_ms));
    std::lock_guard lock(state_mutex);
    state = std::move(loaded);
    return nvml::SUCCESS;
}

// Each nvmlShutdown is logged to $PROVISION_FAKE_NVML_SHUTDOWN_LOG.
FAKE_EXPORT nvml::Return nvmlShutdown() {
    record_call("PROVISION_FAKE_NVML_SHUTDOWN_LOG", "nvmlShutdown");
    std::lock_guard lock(state_mutex);
    if (!state) return nvml::ERROR_UNINITIALIZED;
    state.reset();
    return nvml::SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvml::Return code) {
    switch (code) {
        case nvml::SUCCESS: return "Success";
        case nvml::ERROR_UNINITIALIZED: return "Uninitialized";
        case nvml::ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case nvml::ERROR_NOT_SUPPORTED: return "Not Supported";
        case nvml::ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case nvml::ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case nvml::ERROR_TIMEOUT: return "Timeout";
        case nvml::ERROR_GPU_IS_LOST: return "GPU is lost";
        case nvml::ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
        default: return "Unknown Error";
    }
}

FAKE_EXPORT nvml::Return nvmlSystemGetDriverVersion(char* version, unsigned length) {
    const auto current = machine();
    if (!current) return nvml::ERROR_UNINITIALIZED;
    return copy_text(current->fixture.driver.version, version, length);
}

#ifndef FAKE_OLD_DRIVER
FAKE_EXPORT nvml::Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
    const auto current = machine();
    if (!current) return nvml::ERROR_UNINITIALIZED;
    if (!version) return nvml::ERROR_INVALID_ARGUMENT;
    *version = fake::cuda_version_number(current->fixture.driver.cuda);
    return nvml::SUCCESS;
}
#endif

FAKE_EXPORT nvml::Return nvmlDeviceGetCount_v2(unsigned* count) {
    const auto current = machine();
    if (!current) return nvml::ERROR_UNINITIALIZED;
    if (!count) return nvml::ERROR_INVALID_ARGUMENT;
    *count = static_cast<unsigned>(current->fixture.gpus.size());
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml::Device* device) {
    const auto current = machine();
    if (!current) return nvml::ERROR_UNINITIALIZED;
    if (!device || index >= current->fixture.gpus.size()) return nvml::ERROR_INVALID_ARGUMENT;
    if (const int error = current->failure("nvmlDeviceGetHandleByIndex_v2", index))
        return static_cast<nvml::Return>(error);
    *device = handle_of(index);
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetName(nvml::Device device, char* name, unsigned length) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetName", current, gpu); code != nvml::SUCCESS) return code;
    return copy_text(current->fixture.gpus[gpu].name, name, length);
}

FAKE_EXPORT nvml::Return nvmlDeviceGetUUID(nvml::Device device, char* uuid, unsigned length) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetUUID", current, gpu); code != nvml::SUCCESS) return code;
    return copy_text(current->fixture.gpus[gpu].uuid, uuid, length);
}

FAKE_EXPORT nvml::Return nvmlDeviceGetMemoryInfo(nvml::Device device, nvml::Memory* memory) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetMemoryInfo", current, gpu); code != nvml::SUCCESS) return code;
    if (!memory) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& fixture_gpu = current->fixture.gpus[gpu];
    memory->total = fixture_gpu.memory_mib * 1024ULL * 1024ULL;
    // Like the real call, "used" counts what the driver reserves.
    memory->used = (fixture_gpu.health.memory_used_mib.value_or(0) + reserved_mib) * 1024ULL * 1024ULL;
    memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
    return nvml::SUCCESS;
}

#ifndef FAKE_OLD_DRIVER
FAKE_EXPORT nvml::Return nvmlDeviceGetCudaComputeCapability(nvml::Device device, int* major, int* minor) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetCudaComputeCapability", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!major || !minor) return nvml::ERROR_INVALID_ARGUMENT;
    *major = current->fixture.gpus[gpu].compute_capability.major;
    *minor = current->fixture.gpus[gpu].compute_capability.minor;
    return nvml::SUCCESS;
}
#endif

#ifndef FAKE_OLD_DRIVER
FAKE_EXPORT nvml::Return nvmlDeviceGetMemoryInfo_v2(nvml::Device device, nvml::Memory2* memory) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetMemoryInfo_v2", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!memory) return nvml::ERROR_INVALID_ARGUMENT;
    if (memory->version != nvml::memory_v2_version) return nvml::ERROR_ARGUMENT_VERSION_MISMATCH;
    const auto& fixture_gpu = current->fixture.gpus[gpu];
    memory->total = fixture_gpu.memory_mib * 1024ULL * 1024ULL;
    memory->reserved = reserved_mib * 1024ULL * 1024ULL;
    memory->used = fixture_gpu.health.memory_used_mib.value_or(0) * 1024ULL * 1024ULL;
    const auto taken = memory->reserved + memory->used;
    memory->free = memory->total > taken ? memory->total - taken : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetTotalEccErrors(nvml::Device device, int error_type, int counter_type,
                                                     unsigned long long* count) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetTotalEccErrors", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!count || error_type != nvml::memory_error_uncorrected || counter_type != nvml::ecc_counter_volatile)
        return nvml::ERROR_INVALID_ARGUMENT;
    *count = health_of(*current, gpu).uncorrected_ecc_errors.value_or(0);
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetRetiredPagesPendingStatus(nvml::Device device, int* pending) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetRetiredPagesPendingStatus", current, gpu);
        code != nvml::SUCCESS)
        return code;
    if (!pending) return nvml::ERROR_INVALID_ARGUMENT;
    *pending = health_of(*current, gpu).retired_pages_pending.value_or(false) ? nvml::feature_enabled : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetRemappedRows(nvml::Device device, unsigned* corrected, unsigned* uncorrected,
                                                   unsigned* pending, unsigned* failure) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetRemappedRows", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!corrected || !uncorrected || !pending || !failure) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& health = health_of(*current, gpu);
    *corrected = 0;
    *uncorrected = health.row_remap_pending.value_or(false) ? 1 : 0;
    *pending = health.row_remap_pending.value_or(false) ? 1 : 0;
    *failure = health.row_remap_failure.value_or(false) ? 1 : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetCurrentClocksEventReasons(nvml::Device device, unsigned long long* reasons) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetCurrentClocksEventReasons", current, gpu);
        code != nvml::SUCCESS)
        return code;
    if (!reasons) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& health = health_of(*current, gpu);
    *reasons = 0x1;  // GPU idle, as at a container's start
    // The hardware slowdown bit comes with the hardware thermal and power brake ones.
    if (health.thermal_slowdown.value_or(false))
        *reasons |= nvml::clocks_event_hw_thermal | nvml::clocks_event_hw_slowdown;
    if (health.power_brake_slowdown.value_or(false))
        *reasons |= nvml::clocks_event_hw_power_brake | nvml::clocks_event_hw_slowdown;
    if (health.hw_slowdown.value_or(false)) *reasons |= nvml::clocks_event_hw_slowdown;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetComputeRunningProcesses_v3(nvml::Device device, unsigned* count, void* infos) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetComputeRunningProcesses_v3", current, gpu);
        code != nvml::SUCCESS)
        return code;
    if (!count) return nvml::ERROR_INVALID_ARGUMENT;
    // The fixture's other processes, under PIDs above any pid_max (so no
    // process here has them), then the machine's listed processes.
    std::vector<nvml::ProcessInfo> listed;
    for (unsigned i = 0; i < health_of(*current, gpu).other_processes.value_or(0); ++i)
        listed.push_back({0x7ffff000u + i, 256ull << 20, 0, 0});
    for (const auto& process : current->listed_processes)
        listed.push_back({static_cast<unsigned>(process.pid), process.mib << 20, 0, 0});
    const auto processes = static_cast<unsigned>(listed.size());
    const bool room = *count >= processes && (infos || processes == 0);
    *count = processes;
    if (!room) return nvml::ERROR_INSUFFICIENT_SIZE;
    std::copy(listed.begin(), listed.end(), static_cast<nvml::ProcessInfo*>(infos));
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetComputeMode(nvml::Device device, int* mode) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetComputeMode", current, gpu); code != nvml::SUCCESS) return code;
    if (!mode) return nvml::ERROR_INVALID_ARGUMENT;
    const auto compute = health_of(*current, gpu).compute_mode;
    *mode = compute == provision::ComputeMode::prohibited         ? 2
            : compute == provision::ComputeMode::exclusive_process ? 3
                                                                   : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetMigMode(nvml::Device device, unsigned* current_mode, unsigned* pending_mode) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetMigMode", current, gpu); code != nvml::SUCCESS) return code;
    if (!current_mode || !pending_mode) return nvml::ERROR_INVALID_ARGUMENT;
    *current_mode = *pending_mode = health_of(*current, gpu).mig_mode.value_or(false) ? nvml::feature_enabled : 0;
    return nvml::SUCCESS;
}
#endif

// Topology: each GPU's PCIe link and NVLinks (nvlinks, nvlinks_active, pcie
// of its [[gpus]] entry) and each pair's path and peer access ([[links]]).
// GPU p sits at PCI address 0000:(0x18 + 8p):00.0.  A GPU's NVLinks go to
// its NV<n> peers, n links each in [[links]] order, where they suffice;
// where the pairs name more links than the GPU has (every pair NV18 on an
// HGX board), every link goes to an NVSwitch instead.  Links from
// nvlinks_active on are inactive.  An NVLink pair's PCIe relation reads as
// SYS.  Drivers before the topology calls (FAKE_OLD_DRIVER) lack them all.
#ifndef FAKE_OLD_DRIVER
namespace {

constexpr unsigned switch_bus = 0xf0;

unsigned bus_of(std::size_t gpu) { return 0x18 + 8 * static_cast<unsigned>(gpu); }

void fill_pci(nvml::PciInfo& info, unsigned bus) {
    info = {};
    info.domain = 0;
    info.bus = bus;
    info.device = 0;
    info.pci_device_id = 0x233010de;
    std::snprintf(info.bus_id, sizeof info.bus_id, "00000000:%02X:00.0", bus);
    std::snprintf(info.bus_id_legacy, sizeof info.bus_id_legacy, "0000:%02X:00.0", bus);
}

// Where link `link` of `gpu` leads: a peer's position, the switch (-2), or
// nowhere (-1).
int remote_of(const fake::Machine& machine, std::size_t gpu, unsigned link) {
    const auto& fixture = machine.fixture;
    unsigned assigned = 0, named = 0;
    for (const auto& pair : fixture.topology.pairs())
        if (pair.path == provision::LinkPath::nvlink && (pair.first == static_cast<int>(gpu) || pair.second == static_cast<int>(gpu)))
            named += pair.nvlinks;
    const unsigned total = fixture.gpus[gpu].nvlinks ? fixture.gpus[gpu].nvlinks->total : 0;
    if (named > total) return -2;
    for (const auto& pair : fixture.topology.pairs()) {
        if (pair.path != provision::LinkPath::nvlink) continue;
        if (pair.first != static_cast<int>(gpu) && pair.second != static_cast<int>(gpu)) continue;
        if (link < assigned + pair.nvlinks) return pair.first == static_cast<int>(gpu) ? pair.second : pair.first;
        assigned += pair.nvlinks;
    }
    return -1;
}

// The NVLink `link` of `device`, or the error the call must return.
nvml::Return lookup_link(nvml::Device device, unsigned link, const char* function,
                         std::shared_ptr<const fake::Machine>& current, std::size_t& gpu) {
    if (const auto code = lookup(device, function, current, gpu); code != nvml::SUCCESS) return code;
    if (link >= nvml::nvlink_index_limit) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& links = current->fixture.gpus[gpu].nvlinks;
    if (!links || link >= links->total) return nvml::ERROR_NOT_SUPPORTED;
    return nvml::SUCCESS;
}

nvml::Return pcie_figure(nvml::Device device, const char* function, unsigned* value,
                         unsigned provision::PcieLink::*field) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, function, current, gpu); code != nvml::SUCCESS) return code;
    if (!value) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& pcie = current->fixture.gpus[gpu].pcie;
    if (!pcie) return nvml::ERROR_NOT_SUPPORTED;
    *value = (*pcie).*field;
    return nvml::SUCCESS;
}

}  // namespace

FAKE_EXPORT nvml::Return nvmlDeviceGetPciInfo_v3(nvml::Device device, nvml::PciInfo* info) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetPciInfo_v3", current, gpu); code != nvml::SUCCESS) return code;
    if (!info) return nvml::ERROR_INVALID_ARGUMENT;
    fill_pci(*info, bus_of(gpu));
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetGpuFabricInfoV(nvml::Device device, nvml::GpuFabricInfoV2* info) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetGpuFabricInfoV", current, gpu); code != nvml::SUCCESS) return code;
    if (!info || info->version != nvml::gpu_fabric_info_v2) return nvml::ERROR_INVALID_ARGUMENT;
    if (current->fabric_states.empty()) return nvml::ERROR_NOT_SUPPORTED;
    info->state = static_cast<unsigned char>(current->fabric_states[gpu]);
    info->status = 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetP2PStatus(nvml::Device first, nvml::Device second, int index, int* status) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t a = 0, b = 0;
    if (const auto code = lookup(first, "nvmlDeviceGetP2PStatus", current, a); code != nvml::SUCCESS) return code;
    if (const auto code = lookup(second, "nvmlDeviceGetP2PStatus", current, b); code != nvml::SUCCESS) return code;
    if (!status) return nvml::ERROR_INVALID_ARGUMENT;
    const auto* pair = current->fixture.topology.find(static_cast<int>(a), static_cast<int>(b));
    if (a == b || !pair) {
        *status = nvml::P2P_STATUS_NOT_SUPPORTED;  // as the real driver answers for one device twice
    } else if (index == nvml::p2p_caps_read || index == nvml::p2p_caps_write) {
        *status = static_cast<int>(pair->p2p);  // PeerAccess follows nvmlGpuP2PStatus_t's order
    } else if (index == nvml::p2p_caps_nvlink) {
        *status = pair->path == provision::LinkPath::nvlink ? nvml::P2P_STATUS_OK : nvml::P2P_STATUS_NOT_SUPPORTED;
    } else {
        *status = nvml::P2P_STATUS_NOT_SUPPORTED;
    }
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetTopologyCommonAncestor(nvml::Device first, nvml::Device second, int* level) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t a = 0, b = 0;
    if (const auto code = lookup(first, "nvmlDeviceGetTopologyCommonAncestor", current, a); code != nvml::SUCCESS)
        return code;
    if (const auto code = lookup(second, "nvmlDeviceGetTopologyCommonAncestor", current, b); code != nvml::SUCCESS)
        return code;
    if (!level) return nvml::ERROR_INVALID_ARGUMENT;
    const auto* pair = current->fixture.topology.find(static_cast<int>(a), static_cast<int>(b));
    if (a == b || !pair) return nvml::ERROR_NOT_SUPPORTED;
    switch (pair->path) {
        case provision::LinkPath::pix: *level = nvml::TOPOLOGY_SINGLE; break;
        case provision::LinkPath::pxb: *level = nvml::TOPOLOGY_MULTIPLE; break;
        case provision::LinkPath::phb: *level = nvml::TOPOLOGY_HOSTBRIDGE; break;
        case provision::LinkPath::node: *level = nvml::TOPOLOGY_NODE; break;
        default: *level = nvml::TOPOLOGY_SYSTEM; break;
    }
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetNvLinkState(nvml::Device device, unsigned link, unsigned* active) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup_link(device, link, "nvmlDeviceGetNvLinkState", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!active) return nvml::ERROR_INVALID_ARGUMENT;
    *active = link < current->fixture.gpus[gpu].nvlinks->active ? nvml::feature_enabled : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetNvLinkVersion(nvml::Device device, unsigned link, unsigned* version) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup_link(device, link, "nvmlDeviceGetNvLinkVersion", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!version) return nvml::ERROR_INVALID_ARGUMENT;
    // NVML's codes by the GPU's generation: V100 2.0, A100 3.0, H100 4.0, B200 5.0.
    switch (current->fixture.gpus[gpu].compute_capability.major) {
        case 7: *version = 2; break;
        case 8: *version = 4; break;
        case 9: *version = 6; break;
        default: *version = 7; break;
    }
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetNvLinkRemoteDeviceType(nvml::Device device, unsigned link, int* type) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup_link(device, link, "nvmlDeviceGetNvLinkRemoteDeviceType", current, gpu);
        code != nvml::SUCCESS)
        return code;
    if (!type) return nvml::ERROR_INVALID_ARGUMENT;
    const int remote = remote_of(*current, gpu, link);
    *type = remote == -2 ? nvml::nvlink_device_switch : remote >= 0 ? nvml::nvlink_device_gpu : 0xff;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetNvLinkRemotePciInfo_v2(nvml::Device device, unsigned link, nvml::PciInfo* info) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup_link(device, link, "nvmlDeviceGetNvLinkRemotePciInfo_v2", current, gpu);
        code != nvml::SUCCESS)
        return code;
    if (!info) return nvml::ERROR_INVALID_ARGUMENT;
    const int remote = remote_of(*current, gpu, link);
    if (remote == -1) return nvml::ERROR_NOT_SUPPORTED;
    fill_pci(*info, remote == -2 ? switch_bus : bus_of(static_cast<std::size_t>(remote)));
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetCurrPcieLinkGeneration(nvml::Device device, unsigned* value) {
    return pcie_figure(device, "nvmlDeviceGetCurrPcieLinkGeneration", value, &provision::PcieLink::generation);
}
FAKE_EXPORT nvml::Return nvmlDeviceGetCurrPcieLinkWidth(nvml::Device device, unsigned* value) {
    return pcie_figure(device, "nvmlDeviceGetCurrPcieLinkWidth", value, &provision::PcieLink::width);
}
FAKE_EXPORT nvml::Return nvmlDeviceGetMaxPcieLinkGeneration(nvml::Device device, unsigned* value) {
    return pcie_figure(device, "nvmlDeviceGetMaxPcieLinkGeneration", value, &provision::PcieLink::max_generation);
}
FAKE_EXPORT nvml::Return nvmlDeviceGetMaxPcieLinkWidth(nvml::Device device, unsigned* value) {
    return pcie_figure(device, "nvmlDeviceGetMaxPcieLinkWidth", value, &provision::PcieLink::max_width);
}
#endif
