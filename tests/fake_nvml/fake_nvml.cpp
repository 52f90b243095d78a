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
#include <optional>
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

// How often each GPU's link counters were read in this NVML session
// ([gpu][counter], link 0's): [faults] link_error_rise applies from the
// second reading on.
static std::mutex readings_mutex;
static std::vector<std::vector<unsigned>> readings;

// A session's end: the next one's counters read as at first again.
static void forget_counter_readings() {
    std::lock_guard lock(readings_mutex);
    readings.clear();
}

// Each nvmlShutdown is logged to $PROVISION_FAKE_NVML_SHUTDOWN_LOG.
FAKE_EXPORT nvml::Return nvmlShutdown() {
    record_call("PROVISION_FAKE_NVML_SHUTDOWN_LOG", "nvmlShutdown");
    forget_counter_readings();
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
    *uncorrected = health.uncorrectable_remapped_rows.value_or(health.row_remap_pending.value_or(false) ? 1 : 0);
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

// The fabric of GPU `gpu` into any of NVML's structs (the common fields).
template <typename Info>
void fill_fabric(const fake::Machine& machine, std::size_t gpu, Info& info) {
    std::memcpy(info.cluster_uuid, machine.fabric_cluster, sizeof info.cluster_uuid);
    info.state = static_cast<unsigned char>(machine.fabric_states[gpu]);
    info.status = 0;
}

unsigned fabric_clique(const fake::Machine& machine, std::size_t gpu) {
    return machine.fabric_cliques.empty() ? 0 : machine.fabric_cliques[gpu];
}
unsigned fabric_mask(const fake::Machine& machine, std::size_t gpu) {
    return machine.fabric_health_masks.empty() ? 0 : machine.fabric_health_masks[gpu];
}
unsigned char fabric_summary(const fake::Machine& machine, std::size_t gpu) {
    return static_cast<unsigned char>(machine.fabric_health.empty() ? 0 : machine.fabric_health[gpu]);
}

FAKE_EXPORT nvml::Return nvmlDeviceGetGpuFabricInfo_v4(nvml::Device device, nvml::GpuFabricInfoV4* info) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetGpuFabricInfo_v4", current, gpu); code != nvml::SUCCESS) return code;
    if (!info) return nvml::ERROR_INVALID_ARGUMENT;
    if (current->fabric_version < 4) return nvml::ERROR_FUNCTION_NOT_FOUND;  // as a driver without the symbol
    if (current->fabric_states.empty()) return nvml::ERROR_NOT_SUPPORTED;
    fill_fabric(*current, gpu, *info);
    // The unicast clique (type 0) and the handle one (type 2), sorted by type.
    info->num_cliques = 2;
    info->cliques[0] = {0, fabric_clique(*current, gpu)};
    info->cliques[1] = {2, fabric_clique(*current, gpu)};
    info->health_mask = fabric_mask(*current, gpu);
    info->health_summary = fabric_summary(*current, gpu);
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetGpuFabricInfoV(nvml::Device device, void* answer) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetGpuFabricInfoV", current, gpu); code != nvml::SUCCESS) return code;
    if (!answer) return nvml::ERROR_INVALID_ARGUMENT;
    unsigned version = 0;
    std::memcpy(&version, answer, sizeof version);
    const bool v3 = version == nvml::gpu_fabric_info_v3 && current->fabric_version >= 3;
    const bool v2 = version == nvml::gpu_fabric_info_v2 && current->fabric_version >= 2;
    if (!v3 && !v2) return nvml::ERROR_ARGUMENT_VERSION_MISMATCH;
    if (current->fabric_states.empty()) return nvml::ERROR_NOT_SUPPORTED;
    if (v3) {
        auto* info = static_cast<nvml::GpuFabricInfoV3*>(answer);
        fill_fabric(*current, gpu, *info);
        info->clique_id = fabric_clique(*current, gpu);
        info->health_mask = fabric_mask(*current, gpu);
        info->health_summary = fabric_summary(*current, gpu);
    } else {
        auto* info = static_cast<nvml::GpuFabricInfoV2*>(answer);
        fill_fabric(*current, gpu, *info);
        info->clique_id = fabric_clique(*current, gpu);
        info->health_mask = fabric_mask(*current, gpu);
    }
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetGpuFabricInfo(nvml::Device device, nvml::GpuFabricInfo* info) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetGpuFabricInfo", current, gpu); code != nvml::SUCCESS) return code;
    if (!info) return nvml::ERROR_INVALID_ARGUMENT;
    if (current->fabric_states.empty()) return nvml::ERROR_NOT_SUPPORTED;
    fill_fabric(*current, gpu, *info);
    info->clique_id = fabric_clique(*current, gpu);
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

#ifndef FAKE_OLD_DRIVER
// DCGM's signals.  A count the fixture leaves out answers NOT_SUPPORTED; a
// GPU's link counters sit on its link 0 (the others read 0), and from a
// counter's second reading in this process on they read higher by [faults]
// link_error_rise.
namespace {

// `base` risen by `rise` once this is not the first reading of `counter`
// on `gpu`; empty where the fixture has no such counter.
std::optional<std::uint64_t> counter_reading(const fake::Machine& machine, std::size_t gpu, std::size_t counter,
                                             std::optional<std::uint64_t> base, std::optional<std::uint64_t> rise) {
    if (!base) return std::nullopt;
    std::lock_guard lock(readings_mutex);
    if (readings.size() <= gpu) readings.resize(machine.fixture.gpus.size());
    auto& counts = readings[gpu];
    if (counts.size() <= counter) counts.resize(counter + 1);
    const bool later = counts[counter]++ > 0;
    return *base + (later ? rise.value_or(0) : 0);
}

enum Counter : std::size_t { replay, recovery, crc_flit, crc_data, recovery_events, recovery_failed, symbol_errors, pcie };

}  // namespace

FAKE_EXPORT nvml::Return nvmlDeviceGetRetiredPages(nvml::Device device, int cause, unsigned* count,
                                                   unsigned long long* addresses) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetRetiredPages", current, gpu); code != nvml::SUCCESS) return code;
    if (!count) return nvml::ERROR_INVALID_ARGUMENT;
    const auto pages = health_of(*current, gpu).retired_pages;
    if (!pages) return nvml::ERROR_NOT_SUPPORTED;
    // All of them retired for double-bit errors.
    const auto retired = cause == nvml::page_retirement_double_bit ? static_cast<unsigned>(*pages) : 0u;
    const bool room = *count >= retired;
    if (room && addresses)
        for (unsigned i = 0; i < retired; ++i) addresses[i] = 0x1000ull * i;
    *count = retired;
    return room ? nvml::SUCCESS : nvml::ERROR_INSUFFICIENT_SIZE;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetNvLinkErrorCounter(nvml::Device device, unsigned link, int counter,
                                                         unsigned long long* value) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup_link(device, link, "nvmlDeviceGetNvLinkErrorCounter", current, gpu); code != nvml::SUCCESS) return code;
    if (!value || counter < nvml::nvlink_error_dl_replay || counter > nvml::nvlink_error_dl_crc_data)
        return nvml::ERROR_INVALID_ARGUMENT;
    const auto& base = health_of(*current, gpu).link_errors;
    const auto& rise = current->link_error_rise;
    std::optional<std::uint64_t> reading;
    // CRC errors: all of them counted as flit errors.
    switch (counter) {
        case nvml::nvlink_error_dl_replay: reading = base.nvlink_replay; break;
        case nvml::nvlink_error_dl_recovery: reading = base.nvlink_recovery; break;
        case nvml::nvlink_error_dl_crc_flit: reading = base.nvlink_crc; break;
        default: reading = base.nvlink_crc ? std::optional<std::uint64_t>(0) : std::nullopt; break;
    }
    if (!reading) return nvml::ERROR_NOT_SUPPORTED;
    if (link == 0) {
        const std::optional<std::uint64_t> risen[] = {rise.nvlink_replay, rise.nvlink_recovery, rise.nvlink_crc, {}};
        reading = counter_reading(*current, gpu, static_cast<std::size_t>(counter), reading, risen[counter]);
    }
    *value = link == 0 ? *reading : 0;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceGetPcieReplayCounter(nvml::Device device, unsigned* value) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetPcieReplayCounter", current, gpu); code != nvml::SUCCESS)
        return code;
    if (!value) return nvml::ERROR_INVALID_ARGUMENT;
    const auto replays = health_of(*current, gpu).link_errors.pcie_replays;
    const auto reading = counter_reading(*current, gpu, pcie, replays ? std::optional<std::uint64_t>(*replays) : std::nullopt,
                                         current->link_error_rise.pcie_replays);
    if (!reading) return nvml::ERROR_NOT_SUPPORTED;
    *value = static_cast<unsigned>(*reading);
    return nvml::SUCCESS;
}

// The GPU's recovery action and, on Blackwell, its NVLinks' recovery and
// symbol-error fields, each with its own answer; other fields NOT_SUPPORTED.
FAKE_EXPORT nvml::Return nvmlDeviceGetFieldValues(nvml::Device device, int count, nvml::FieldValue* values) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceGetFieldValues", current, gpu); code != nvml::SUCCESS) return code;
    if (count < 0 || (count > 0 && !values)) return nvml::ERROR_INVALID_ARGUMENT;
    const auto& health = health_of(*current, gpu);
    const auto& fixture_gpu = current->fixture.gpus[gpu];
    const bool blackwell = fixture_gpu.compute_capability.major >= 10;
    const unsigned links = fixture_gpu.nvlinks ? fixture_gpu.nvlinks->total : 0;
    for (int i = 0; i < count; ++i) {
        auto& field = values[i];
        field.nvml_return = nvml::ERROR_NOT_SUPPORTED;
        field.value_type = nvml::value_type_unsigned_long_long;
        std::optional<std::uint64_t> reading;
        if (field.field_id == nvml::field_gpu_recovery_action) {
            if (health.recovery_action) {
                field.value_type = nvml::value_type_unsigned_int;
                field.value.ui = *health.recovery_action == provision::RecoveryAction::unknown
                                     ? 77u
                                     : static_cast<unsigned>(*health.recovery_action);
                field.nvml_return = nvml::SUCCESS;
            }
            continue;
        }
        const auto& base = health.link_errors;
        const auto& rise = current->link_error_rise;
        // The data-link totals, from Hopper on (older fixtures take the
        // link-by-link path, nvmlDeviceGetNvLinkErrorCounter).
        if (links > 0 && fixture_gpu.compute_capability.major >= 9) {
            std::optional<std::uint64_t> total;
            bool known = true;
            switch (field.field_id) {
                case nvml::field_nvlink_replay_total:
                    total = counter_reading(*current, gpu, replay, base.nvlink_replay, rise.nvlink_replay);
                    break;
                case nvml::field_nvlink_recovery_total:
                    total = counter_reading(*current, gpu, recovery, base.nvlink_recovery, rise.nvlink_recovery);
                    break;
                case nvml::field_nvlink_crc_total:
                    total = counter_reading(*current, gpu, crc_flit, base.nvlink_crc, rise.nvlink_crc);
                    break;
                default: known = false; break;
            }
            if (known) {
                if (total) {
                    field.value.ull = *total;
                    field.nvml_return = nvml::SUCCESS;
                }
                continue;
            }
        }
        if (!blackwell || field.scope_id >= links) continue;
        // Link 0 holds the count; the other links read 0 where it is read at all.
        const auto on_link = [&](std::size_t counter, const std::optional<std::uint64_t>& count,
                                 const std::optional<std::uint64_t>& more) -> std::optional<std::uint64_t> {
            if (!count) return std::nullopt;
            return field.scope_id == 0 ? counter_reading(*current, gpu, counter, count, more) : 0;
        };
        switch (field.field_id) {
            case nvml::field_nvlink_recovery_events:
                reading = on_link(recovery_events, base.nvlink_recovery_events, rise.nvlink_recovery_events);
                break;
            case nvml::field_nvlink_recovery_failed:
                reading = on_link(recovery_failed, base.nvlink_recovery_failed, rise.nvlink_recovery_failed);
                break;
            case nvml::field_nvlink_symbol_errors:
                reading = on_link(symbol_errors, base.nvlink_symbol_errors, rise.nvlink_symbol_errors);
                break;
            default: break;
        }
        if (reading) {
            field.value.ull = *reading;
            field.nvml_return = nvml::SUCCESS;
        }
    }
    return nvml::SUCCESS;
}

// Xid events.  A set remembers the GPUs registered with it and how many of
// the fixture's events it delivered; each wait reads the fixture again.
namespace {

struct FakeEventSet {
    std::vector<bool> registered;
    std::size_t delivered = 0;
};

}  // namespace

FAKE_EXPORT nvml::Return nvmlEventSetCreate(nvml::EventSet* set) {
    if (!set) return nvml::ERROR_INVALID_ARGUMENT;
    if (!machine()) return nvml::ERROR_UNINITIALIZED;
    *set = reinterpret_cast<nvml::EventSet>(new FakeEventSet);
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlDeviceRegisterEvents(nvml::Device device, unsigned long long types, nvml::EventSet set) {
    std::shared_ptr<const fake::Machine> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "nvmlDeviceRegisterEvents", current, gpu); code != nvml::SUCCESS) return code;
    if (!set || types != nvml::event_type_xid_critical_error) return nvml::ERROR_INVALID_ARGUMENT;
    auto& registered = reinterpret_cast<FakeEventSet*>(set)->registered;
    if (registered.size() <= gpu) registered.resize(gpu + 1);
    registered[gpu] = true;
    return nvml::SUCCESS;
}

FAKE_EXPORT nvml::Return nvmlEventSetWait_v2(nvml::EventSet set, nvml::EventData* data, unsigned timeout_ms) {
    if (!set || !data) return nvml::ERROR_INVALID_ARGUMENT;
    auto& events = *reinterpret_cast<FakeEventSet*>(set);
    const auto now = fake::load_machine("fake NVML");
    if (now)
        while (events.delivered < now->xid_events.size()) {
            const auto& event = now->xid_events[events.delivered++];
            if (event.gpu >= events.registered.size() || !events.registered[event.gpu]) continue;
            *data = {handle_of(event.gpu), nvml::event_type_xid_critical_error,
                     static_cast<unsigned long long>(event.xid), 0xFFFFFFFFu, 0xFFFFFFFFu};
            return nvml::SUCCESS;
        }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 100u)));
    return nvml::ERROR_TIMEOUT;
}

FAKE_EXPORT nvml::Return nvmlEventSetFree(nvml::EventSet set) {
    delete reinterpret_cast<FakeEventSet*>(set);
    return nvml::SUCCESS;
}
#endif
