#include "gpu/nvml_probe.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/gpu_worker_name.h"
#include "core/shared_library.h"
#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "gpu/nvml_stand_in.h"
#include "gpu/nvml_topology.h"
#include "gpu/visible_devices.h"

namespace provision {

namespace {

struct NvmlFunctions {
    nvml::InitFn init = nullptr;
    nvml::ShutdownFn shutdown = nullptr;
    nvml::ErrorStringFn error_string = nullptr;
    nvml::SystemGetDriverVersionFn driver_version = nullptr;
    nvml::DeviceGetCountFn device_count = nullptr;
    nvml::DeviceGetHandleByIndexFn handle_by_index = nullptr;
    nvml::DeviceGetNameFn name = nullptr;
    nvml::DeviceGetUuidFn uuid = nullptr;
    nvml::DeviceGetMemoryInfoFn memory = nullptr;
    // Optional: older drivers lack them, libcuda answers instead.
    nvml::SystemGetCudaDriverVersionFn cuda_driver_version = nullptr;
    nvml::DeviceGetCudaComputeCapabilityFn compute_capability = nullptr;
    // Optional health queries.
    nvml::DeviceGetMemoryInfoV2Fn memory_v2 = nullptr;
    nvml::DeviceGetTotalEccErrorsFn ecc_errors = nullptr;
    nvml::DeviceGetRetiredPagesPendingStatusFn retired_pages_pending = nullptr;
    nvml::DeviceGetRemappedRowsFn remapped_rows = nullptr;
    nvml::DeviceGetClocksEventReasonsFn clocks_event_reasons = nullptr;
    nvml::DeviceGetComputeRunningProcessesFn compute_processes = nullptr;
    nvml::DeviceGetComputeRunningProcessesFn process_list = nullptr;  // _v3 or _v2: lists nvml::ProcessInfo
    nvml::DeviceGetMigModeFn mig_mode = nullptr;
    nvml::DeviceGetComputeModeFn compute_mode = nullptr;
    // Optional: the signals DCGM's health watches judge.
    nvml::DeviceGetFieldValuesFn field_values = nullptr;
    nvml::DeviceGetRetiredPagesFn retired_pages = nullptr;
    nvml::DeviceGetNvLinkErrorCounterFn nvlink_error_counter = nullptr;
    nvml::DeviceGetPcieReplayCounterFn pcie_replay_counter = nullptr;

    // The first required function the library lacks, or "".  Health
    // queries in the order NVIDIA introduced them: the newest name first.
    std::string load(const SharedLibrary& library) {
        return library.resolve({
            Symbol::required(init, "nvmlInit_v2"),
            Symbol::required(shutdown, "nvmlShutdown"),
            Symbol::required(driver_version, "nvmlSystemGetDriverVersion"),
            Symbol::required(device_count, "nvmlDeviceGetCount_v2"),
            Symbol::required(handle_by_index, "nvmlDeviceGetHandleByIndex_v2"),
            Symbol::required(name, "nvmlDeviceGetName"),
            Symbol::required(uuid, "nvmlDeviceGetUUID"),
            Symbol::required(memory, "nvmlDeviceGetMemoryInfo"),
            Symbol::optional(error_string, "nvmlErrorString"),
            Symbol::optional(cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2"),
            Symbol::optional(compute_capability, "nvmlDeviceGetCudaComputeCapability"),
            Symbol::optional(memory_v2, "nvmlDeviceGetMemoryInfo_v2"),
            Symbol::optional(ecc_errors, "nvmlDeviceGetTotalEccErrors"),
            Symbol::optional(retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus"),
            Symbol::optional(remapped_rows, "nvmlDeviceGetRemappedRows"),
            Symbol::optional(clocks_event_reasons,
                             {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}),
            Symbol::optional(compute_processes,
                             {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                              "nvmlDeviceGetComputeRunningProcesses"}),
            Symbol::optional(process_list,
                             {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}),
            Symbol::optional(mig_mode, "nvmlDeviceGetMigMode"),
            Symbol::optional(compute_mode, "nvmlDeviceGetComputeMode"),
            Symbol::optional(field_values, "nvmlDeviceGetFieldValues"),
            Symbol::optional(retired_pages, "nvmlDeviceGetRetiredPages"),
            Symbol::optional(nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter"),
            Symbol::optional(pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter"),
        });
    }

    std::string describe(nvml::Return code) const {
        const char* text = error_string ? error_string(code) : nullptr;
        return fmt::format("{} (NVML error {})", text ? text : "unknown error", static_cast<int>(code));
    }
};

DriverFaultKind init_failure_kind(nvml::Return code) {
    switch (code) {
        case nvml::ERROR_DRIVER_NOT_LOADED: return DriverFaultKind::driver_not_loaded;
        case nvml::ERROR_LIB_RM_VERSION_MISMATCH: return DriverFaultKind::version_mismatch;
        case nvml::ERROR_GPU_IS_LOST: return DriverFaultKind::gpu_lost;
        default: return DriverFaultKind::nvml_init_failed;
    }
}

// What a failed nvmlInit means for someone starting a pod.
std::string init_failure_note(nvml::Return code, const NvmlFunctions& nvml) {
    switch (code) {
        case nvml::ERROR_DRIVER_NOT_LOADED:
            return "NVML reports that the NVIDIA kernel driver is not loaded: the GPUs cannot be used; check that "
                   "the pod runs on a GPU node with the driver installed";
        case nvml::ERROR_LIB_RM_VERSION_MISMATCH:
            return "NVML reports a driver/library version mismatch: the container's NVIDIA libraries do not match "
                   "the host driver; restart the pod or fix the image";
        case nvml::ERROR_NO_PERMISSION:
            return "NVML was refused access to the GPU devices (/dev/nvidia*): run the container with the NVIDIA "
                   "container runtime and a GPU assigned";
        case nvml::ERROR_OPERATING_SYSTEM:
            return "NVML reports that the operating system or cgroups block the GPU devices: the container was "
                   "not given access to its GPU";
        case nvml::ERROR_GPU_IS_LOST:
            return "NVML reports that a GPU has fallen off the bus: the GPU needs a reset or the node a reboot";
        default:
            return fmt::format("NVML failed to start: {}; the GPUs cannot be read", nvml.describe(code));
    }
}

DriverFault gpu_failure(unsigned index, const char* what, nvml::Return code, const NvmlFunctions& nvml) {
    const int gpu = static_cast<int>(index);
    if (code == nvml::ERROR_GPU_IS_LOST)
        return {DriverFaultKind::gpu_lost, gpu,
                fmt::format("NVML's GPU {} has fallen off the bus or is otherwise inaccessible: the GPU needs a "
                            "reset or the node a reboot",
                            index)};
    return {DriverFaultKind::gpu_unreadable, gpu,
            fmt::format("NVML's GPU {} could not be read ({}: {})", index, what, nvml.describe(code))};
}

// provision's own GPU workers share no GPU with the workload: one of this
// run started early may already hold a context while the GPUs are read, and
// a finished run's worker tears its context down after that run has handed
// off (docs/DESIGN.md, "Validation").  Counted, they would make the next run
// report "memory_in_use"; so the processes named as provision's workers are
// left out of the count and their memory out of the memory in use.  Where
// the list cannot be read (an older driver's call, a PID of another PID
// namespace) every process counts, as before.
void leave_out_own_workers(const NvmlFunctions& nvml, nvml::Device device, unsigned index, GpuHealth& health,
                           std::vector<std::string>& notes) {
    if (!nvml.process_list) return;
    // A few more entries than counted: a process may start between the calls.
    // Bounded, so that a driver's absurd count costs no memory.
    constexpr unsigned most_listed = 4096;
    unsigned count = std::min(*health.other_processes + 8, most_listed);
    std::vector<nvml::ProcessInfo> processes(count);
    if (nvml.process_list(device, &count, processes.data()) != nvml::SUCCESS) return;
    processes.resize(std::min<std::size_t>(count, processes.size()));
    unsigned own = 0, others = 0;
    std::uint64_t own_bytes = 0;
    for (const nvml::ProcessInfo& process : processes) {
        if (!is_gpu_worker_process(process.pid)) {
            ++others;
            continue;
        }
        ++own;
        if (process.used_gpu_memory != nvml::value_not_available) own_bytes += process.used_gpu_memory;
    }
    if (own == 0) return;
    health.other_processes = others;
    const std::uint64_t own_mib = own_bytes / (1024 * 1024);
    if (health.memory_used_mib)
        health.memory_used_mib = *health.memory_used_mib - std::min(*health.memory_used_mib, own_mib);
    notes.push_back(fmt::format("GPU {}: {} of provision's own validation workers ({} MiB) not counted as "
                                "processes sharing it",
                                index, own, own_mib));
}

// One health signal through `read`, or nothing (noted, unless the driver
// lacks the function or the GPU the feature).
template <typename Function, typename Read>
auto query_health(const NvmlFunctions& nvml, unsigned index, std::vector<std::string>& notes, Function function,
                  const char* name, Read read) {
    using Value = decltype(read(std::declval<nvml::Return&>()));
    if (!function) return Value();
    nvml::Return code = nvml::SUCCESS;
    auto value = read(code);
    if (code == nvml::SUCCESS) return value;
    if (code != nvml::ERROR_NOT_SUPPORTED && code != nvml::ERROR_FUNCTION_NOT_FOUND)
        notes.push_back(
            fmt::format("NVML could not read a health signal of GPU {} ({}: {})", index, name, nvml.describe(code)));
    return Value();
}

// A field's value as a number, whatever type NVML gave it.
long long field_number(const nvml::FieldValue& value) {
    switch (value.value_type) {
        case nvml::value_type_double: return static_cast<long long>(value.value.d);
        case nvml::value_type_unsigned_int: return value.value.ui;
        case nvml::value_type_unsigned_long: return static_cast<long long>(value.value.ul);
        case nvml::value_type_unsigned_long_long: return static_cast<long long>(value.value.ull);
        case nvml::value_type_signed_int: return value.value.si;
        case nvml::value_type_unsigned_short: return value.value.us;
        default: return value.value.sll;
    }
}

// A GPU's link error counters (LinkErrorCounts): the NVLink data-link
// counters summed over its links, as DCGM reads them (the DL totals), in one
// nvmlDeviceGetFieldValues call with, on Blackwell, the recovery and
// symbol-error fields DCGM watches there (per link, scopeId); a counter whose
// total the driver does not give is summed from its first `nvlinks` links one
// by one (nvmlDeviceGetNvLinkErrorCounter, 4 calls a link: on 4 x H200, 288
// calls of 6.6 ms each, most of a four-GPU probe).  Then the PCIe replay
// counter.  Each counter stays empty where nothing answers it.
LinkErrorCounts read_link_errors(const NvmlFunctions& nvml, nvml::Device device, unsigned nvlinks, bool nvlink5) {
    LinkErrorCounts counts;
    const auto add = [](std::optional<std::uint64_t>& total, unsigned long long value) {
        total = total.value_or(0) + value;
    };
    if (nvlinks == 0) {
        // No NVLink: only the PCIe counter below.
    } else if (nvml.field_values || nvml.nvlink_error_counter) {
        struct Total {
            unsigned field;
            std::vector<int> counters;  // nvmlNvLinkErrorCounter_t, for a link at a time
            std::optional<std::uint64_t>* into;
            bool read = false;
        };
        // CRC: one total of flit and data errors; link by link, the two counters.
        Total totals[] = {{nvml::field_nvlink_replay_total, {nvml::nvlink_error_dl_replay}, &counts.nvlink_replay},
                          {nvml::field_nvlink_recovery_total, {nvml::nvlink_error_dl_recovery}, &counts.nvlink_recovery},
                          {nvml::field_nvlink_crc_total,
                           {nvml::nvlink_error_dl_crc_flit, nvml::nvlink_error_dl_crc_data},
                           &counts.nvlink_crc}};
        const std::pair<unsigned, std::optional<std::uint64_t>*> per_link[] = {
            {nvml::field_nvlink_recovery_events, &counts.nvlink_recovery_events},
            {nvml::field_nvlink_recovery_failed, &counts.nvlink_recovery_failed},
            {nvml::field_nvlink_symbol_errors, &counts.nvlink_symbol_errors}};
        if (nvml.field_values) {
            std::vector<nvml::FieldValue> values;
            for (const Total& total : totals) {
                nvml::FieldValue value{};
                value.field_id = total.field;
                value.scope_id = nvlink5 ? std::numeric_limits<unsigned>::max() : 0;
                values.push_back(value);
            }
            for (unsigned link = 0; link < nvlinks; ++link)
                for (const auto& [field, into] : per_link) {
                    nvml::FieldValue value{};
                    value.field_id = field;
                    value.scope_id = link;
                    values.push_back(value);
                }
            if (nvml.field_values(device, static_cast<int>(values.size()), values.data()) == nvml::SUCCESS) {
                for (std::size_t i = 0; i < std::size(totals); ++i)
                    if (values[i].nvml_return == nvml::SUCCESS && field_number(values[i]) >= 0) {
                        add(*totals[i].into, static_cast<unsigned long long>(field_number(values[i])));
                        totals[i].read = true;
                    }
                for (std::size_t i = std::size(totals); i < values.size(); ++i)
                    if (values[i].nvml_return == nvml::SUCCESS && field_number(values[i]) >= 0)
                        add(*per_link[(i - std::size(totals)) % std::size(per_link)].second,
                            static_cast<unsigned long long>(field_number(values[i])));
            }
        }
        if (nvml.nvlink_error_counter)
            for (const Total& total : totals) {
                if (total.read) continue;
                for (unsigned link = 0; link < nvlinks; ++link)
                    for (const int counter : total.counters) {
                        unsigned long long value = 0;
                        if (nvml.nvlink_error_counter(device, link, counter, &value) == nvml::SUCCESS)
                            add(*total.into, value);
                    }
            }
    }
    if (unsigned replays = 0; nvml.pcie_replay_counter && nvml.pcie_replay_counter(device, &replays) == nvml::SUCCESS)
        counts.pcie_replays = replays;
    return counts;
}

// The GPU memory's health: its errors, retired pages and remapped rows.
// Never fails; each unreadable signal stays empty.
void read_memory_health(const NvmlFunctions& nvml, nvml::Device device, unsigned index, GpuHealth& health,
                        std::vector<std::string>& notes) {
    auto query = [&](auto function, const char* name, auto read) {
        return query_health(nvml, index, notes, function, name, read);
    };
    health.uncorrected_ecc_errors =
        query(nvml.ecc_errors, "nvmlDeviceGetTotalEccErrors", [&](nvml::Return& code) -> std::optional<std::uint64_t> {
            unsigned long long count = 0;
            code = nvml.ecc_errors(device, nvml::memory_error_uncorrected, nvml::ecc_counter_volatile, &count);
            return count;
        });
    health.retired_pages_pending = query(nvml.retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus",
                                         [&](nvml::Return& code) -> std::optional<bool> {
                                             int pending = 0;
                                             code = nvml.retired_pages_pending(device, &pending);
                                             return pending == nvml::feature_enabled;
                                         });
    struct Rows {
        bool pending = false, failure = false;
        unsigned uncorrectable = 0;
    };
    const auto rows = query(nvml.remapped_rows, "nvmlDeviceGetRemappedRows", [&](nvml::Return& code) -> std::optional<Rows> {
        unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
        code = nvml.remapped_rows(device, &corrected, &uncorrected, &pending, &failure);
        return Rows{pending != 0, failure != 0, uncorrected};
    });
    if (rows) {
        health.row_remap_pending = rows->pending;
        health.row_remap_failure = rows->failure;
        health.uncorrectable_remapped_rows = rows->uncorrectable;
    }
    // Pages retired for either cause (DCGM adds the two up), pending ones
    // included: a count only, no addresses asked for.
    health.retired_pages = query(nvml.retired_pages, "nvmlDeviceGetRetiredPages",
                                 [&](nvml::Return& code) -> std::optional<std::uint64_t> {
                                     std::uint64_t total = 0;
                                     for (const int cause : {nvml::page_retirement_multiple_single_bit,
                                                             nvml::page_retirement_double_bit}) {
                                         unsigned count = 0;
                                         code = nvml.retired_pages(device, cause, &count, nullptr);
                                         if (code == nvml::ERROR_INSUFFICIENT_SIZE) code = nvml::SUCCESS;
                                         if (code != nvml::SUCCESS) return std::nullopt;
                                         total += count;
                                     }
                                     return total;
                                 });
    health.recovery_action = query(nvml.field_values, "nvmlDeviceGetFieldValues",
                                   [&](nvml::Return& code) -> std::optional<RecoveryAction> {
                                       nvml::FieldValue value{};
                                       value.field_id = nvml::field_gpu_recovery_action;
                                       code = nvml.field_values(device, 1, &value);
                                       if (code == nvml::SUCCESS) code = value.nvml_return;
                                       return recovery_action_of(field_number(value));
                                   });
}

// What the GPU is doing: its clocks' slowdowns, the memory in use, the
// processes sharing it and its compute mode.  Never fails; each unreadable
// signal stays empty.
void read_activity(const NvmlFunctions& nvml, nvml::Device device, unsigned index, GpuHealth& health,
                   std::vector<std::string>& notes) {
    auto query = [&](auto function, const char* name, auto read) {
        return query_health(nvml, index, notes, function, name, read);
    };
    const auto reasons = query(nvml.clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
                               [&](nvml::Return& code) -> std::optional<unsigned long long> {
                                   unsigned long long bits = 0;
                                   code = nvml.clocks_event_reasons(device, &bits);
                                   return bits;
                               });
    if (reasons) {
        health.thermal_slowdown = (*reasons & (nvml::clocks_event_sw_thermal | nvml::clocks_event_hw_thermal)) != 0;
        health.power_brake_slowdown = (*reasons & nvml::clocks_event_hw_power_brake) != 0;
        // The hardware slowdown bit is also set by the two above; alone it
        // means power draw too high or another hardware protection.
        health.hw_slowdown = (*reasons & nvml::clocks_event_hw_slowdown) != 0 &&
                             (*reasons & (nvml::clocks_event_hw_thermal | nvml::clocks_event_hw_power_brake)) == 0;
    }
    if (nvml.memory_v2)  // else read_gpu kept the older call's figure
        health.memory_used_mib = query(nvml.memory_v2, "nvmlDeviceGetMemoryInfo_v2",
                                       [&](nvml::Return& code) -> std::optional<std::uint64_t> {
                                           nvml::Memory2 memory{};
                                           memory.version = nvml::memory_v2_version;
                                           code = nvml.memory_v2(device, &memory);
                                           return memory.used / (1024 * 1024);
                                       });
    health.other_processes = query(nvml.compute_processes, "nvmlDeviceGetComputeRunningProcesses",
                                   [&](nvml::Return& code) -> std::optional<unsigned> {
                                       unsigned count = 0;
                                       code = nvml.compute_processes(device, &count, nullptr);
                                       // With no buffer, "insufficient size" is the answer: count is set.
                                       if (code == nvml::ERROR_INSUFFICIENT_SIZE) code = nvml::SUCCESS;
                                       return count;
                                   });
    if (health.other_processes.value_or(0) > 0) leave_out_own_workers(nvml, device, index, health, notes);
    health.compute_mode = query(nvml.compute_mode, "nvmlDeviceGetComputeMode",
                                [&](nvml::Return& code) -> std::optional<ComputeMode> {
                                    int mode = 0;
                                    code = nvml.compute_mode(device, &mode);
                                    return mode == 2 ? ComputeMode::prohibited
                                           : mode == 1 || mode == 3 ? ComputeMode::exclusive_process
                                                                    : ComputeMode::shared;
                                });
}

// Fills one GPU, or returns the first failure.
std::optional<DriverFault> read_gpu(const NvmlFunctions& nvml, unsigned index, NvmlGpu& out,
                                    std::vector<std::string>& notes, nvml::Device& device) {
    nvml::Return code = nvml.handle_by_index(index, &device);
    if (code != nvml::SUCCESS) return gpu_failure(index, "nvmlDeviceGetHandleByIndex_v2", code, nvml);

    char name[nvml::name_buffer_size] = {};
    if ((code = nvml.name(device, name, sizeof name)) != nvml::SUCCESS)
        return gpu_failure(index, "nvmlDeviceGetName", code, nvml);
    out.gpu.name = name;

    char uuid[nvml::uuid_buffer_size] = {};
    if ((code = nvml.uuid(device, uuid, sizeof uuid)) != nvml::SUCCESS)
        return gpu_failure(index, "nvmlDeviceGetUUID", code, nvml);
    out.gpu.uuid = uuid;

    nvml::Memory memory{};
    if ((code = nvml.memory(device, &memory)) != nvml::SUCCESS)
        return gpu_failure(index, "nvmlDeviceGetMemoryInfo", code, nvml);
    out.gpu.memory_mib = memory.total / (1024 * 1024);
    // Without the _v2 call, the older figure (which counts reserved memory).
    if (!nvml.memory_v2) out.gpu.health.memory_used_mib = memory.used / (1024 * 1024);

    if (nvml.compute_capability) {
        int major = 0, minor = 0;
        if ((code = nvml.compute_capability(device, &major, &minor)) != nvml::SUCCESS)
            return gpu_failure(index, "nvmlDeviceGetCudaComputeCapability", code, nvml);
        out.gpu.compute_capability = {major, minor};
        out.capability_known = true;
    }
    // Whether NVML can stand in for libcuda depends on it, so it is read with the GPU's identity.
    if (nvml.mig_mode) {
        unsigned current = 0, pending = 0;
        code = nvml.mig_mode(device, &current, &pending);
        if (code == nvml::SUCCESS)
            out.gpu.health.mig_mode = current == nvml::feature_enabled;
        else if (code != nvml::ERROR_NOT_SUPPORTED && code != nvml::ERROR_FUNCTION_NOT_FOUND)
            notes.push_back(fmt::format("NVML could not read a health signal of GPU {} (nvmlDeviceGetMigMode: {})",
                                        index, nvml.describe(code)));
    }
    out.mig_enabled = out.gpu.health.mig_mode.value_or(false);
    return std::nullopt;
}

// The GPUs whose health and links are read: those the workload will see
// where NVML's list is already its view, else every one.
std::vector<bool> gpus_to_read(const NvmlReport& report, const CudaEnvironment& workload) {
    std::vector<bool> wanted(report.gpus.size(), true);
    if (!workload.visible_devices || why_libcuda_is_needed(report, workload)) return wanted;
    std::vector<std::string> uuids;
    for (const NvmlGpu& entry : report.gpus) uuids.push_back(entry.gpu.uuid);
    std::fill(wanted.begin(), wanted.end(), false);
    for (const std::size_t position : select_visible_devices(uuids, workload.visible_devices).positions)
        wanted[position] = true;
    return wanted;
}

void read_machine(const NvmlFunctions& nvml, const SharedLibrary& library, const CudaEnvironment& workload,
                  const std::string& sysfs, NvmlReport& report) {
    char version[nvml::driver_version_buffer_size] = {};
    if (const auto code = nvml.driver_version(version, sizeof version); code == nvml::SUCCESS)
        report.driver_version = version;
    else
        report.notes.push_back(fmt::format("NVML could not read the driver version: {}", nvml.describe(code)));

    if (int cuda = 0; nvml.cuda_driver_version && nvml.cuda_driver_version(&cuda) == nvml::SUCCESS)
        report.cuda_version = cuda::version_text(cuda);

    unsigned count = 0;
    if (const auto code = nvml.device_count(&count); code != nvml::SUCCESS) {
        report.faults.push_back({DriverFaultKind::nvml_init_failed, -1,
                                 fmt::format("NVML could not count the GPUs: {}", nvml.describe(code))});
        report.problem = true;
        return;
    }
    // Each GPU on a thread of its own: dozens of driver calls a GPU, which
    // NVML answers for several GPUs at once.
    std::vector<nvml::Device> devices(count, nullptr);  // nullptr for a GPU that could not be read
    std::vector<NvmlGpu> entries(count);
    std::vector<std::vector<std::string>> notes(count);
    std::vector<std::optional<DriverFault>> failures(count);
    std::vector<std::thread> readers;
    for (unsigned index = 0; index < count; ++index)
        readers.emplace_back([&, index] {
            entries[index].gpu.nvml_index = static_cast<int>(index);
            failures[index] = read_gpu(nvml, index, entries[index], notes[index], devices[index]);
        });
    for (auto& reader : readers) reader.join();
    readers.clear();
    for (unsigned index = 0; index < count; ++index) {
        report.notes.insert(report.notes.end(), notes[index].begin(), notes[index].end());
        notes[index].clear();
        if (failures[index]) {
            entries[index].readable = false;
            devices[index] = nullptr;
            report.faults.push_back(std::move(*failures[index]));
            report.problem = true;
        }
        report.gpus.push_back(std::move(entries[index]));
    }
    const std::vector<bool> wanted = gpus_to_read(report, workload);
    // Each GPU's memory health, its activity and (read_nvml_topology) its
    // links at once: the slowest calls (the ECC counter, the NVLinks' first
    // state, the clocks) take milliseconds each, and the driver overlaps
    // part of the calls about one GPU (docs/PERFORMANCE.md, "Where the time
    // went").  The three write apart: the health's two halves different
    // fields, the topology none of them.
    std::vector<std::vector<std::string>> activity_notes(count);
    for (unsigned index = 0; index < count; ++index) {
        if (!wanted[index]) devices[index] = nullptr;  // hidden from the workload: no links read either
        if (!devices[index]) continue;
        GpuHealth& health = report.gpus[index].gpu.health;
        readers.emplace_back([&, index] { read_memory_health(nvml, devices[index], index, health, notes[index]); });
        readers.emplace_back([&, index] { read_activity(nvml, devices[index], index, health, activity_notes[index]); });
    }
    read_nvml_topology(library, devices, report, sysfs + "/bus/pci/devices");
    for (auto& reader : readers) reader.join();
    readers.clear();
    // The link error counters, once the topology has counted each GPU's NVLinks.
    for (unsigned index = 0; index < count; ++index) {
        if (!devices[index]) continue;
        Gpu& gpu = report.gpus[index].gpu;
        readers.emplace_back([&, index] {
            gpu.health.link_errors = read_link_errors(nvml, devices[index], gpu.nvlinks ? gpu.nvlinks->total : 0,
                                                      gpu.compute_capability.major >= 10);
        });
    }
    for (auto& reader : readers) reader.join();
    for (unsigned index = 0; index < count; ++index) {
        report.notes.insert(report.notes.end(), notes[index].begin(), notes[index].end());
        report.notes.insert(report.notes.end(), activity_notes[index].begin(), activity_notes[index].end());
    }
}

}  // namespace

namespace {

struct PendingShutdowns {
    std::mutex mutex;
    std::condition_variable ended;
    int count = 0;
    nvml::ShutdownFn deferred = nullptr;  // a session kept until release_nvml()
};

PendingShutdowns& pending_shutdowns() {
    static PendingShutdowns pending;
    return pending;
}

void shutdown_in_background(nvml::ShutdownFn shutdown) {
    {
        std::lock_guard lock(pending_shutdowns().mutex);
        ++pending_shutdowns().count;
    }
    std::thread([shutdown] {
        shutdown();
        std::lock_guard lock(pending_shutdowns().mutex);
        --pending_shutdowns().count;
        pending_shutdowns().ended.notify_all();
    }).detach();
}

void defer_shutdown(nvml::ShutdownFn shutdown) {
    std::lock_guard lock(pending_shutdowns().mutex);
    pending_shutdowns().deferred = shutdown;
}

}  // namespace

void release_nvml() {
    nvml::ShutdownFn shutdown = nullptr;
    {
        std::lock_guard lock(pending_shutdowns().mutex);
        std::swap(shutdown, pending_shutdowns().deferred);
    }
    if (shutdown) shutdown_in_background(shutdown);
}

std::vector<std::optional<LinkErrorCounts>> read_link_errors_again(const std::string& library_name,
                                                                   const std::vector<Gpu>& gpus) {
    std::vector<std::optional<LinkErrorCounts>> counts(gpus.size());
    if (std::none_of(gpus.begin(), gpus.end(), [](const Gpu& gpu) { return gpu.health.link_errors.any(); }))
        return counts;  // none read at start: nothing to compare
    SharedLibrary library(library_name);
    NvmlFunctions nvml;
    if (!library.loaded() || !nvml.load(library).empty() || nvml.init() != nvml::SUCCESS) return counts;
    library.keep_loaded();
    std::vector<std::thread> readers;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i].nvml_index < 0 || !gpus[i].health.link_errors.any()) continue;
        readers.emplace_back([&, i] {
            nvml::Device device = nullptr;
            if (nvml.handle_by_index(static_cast<unsigned>(gpus[i].nvml_index), &device) == nvml::SUCCESS)
                counts[i] = read_link_errors(nvml, device, gpus[i].nvlinks ? gpus[i].nvlinks->total : 0,
                                             gpus[i].compute_capability.major >= 10);
        });
    }
    for (auto& reader : readers) reader.join();
    nvml.shutdown();  // this session's own; the probe's, where kept, stays until release_nvml()
    return counts;
}

NvmlReport probe_nvml(const std::string& library_name, const CudaEnvironment& workload, NvmlAfterReading after,
                      const std::string& sysfs) {
    // An earlier probe's shutdown ends first: init and shutdown never overlap.
    wait_for_nvml_shutdown(std::chrono::seconds(5));
    NvmlReport report;
    report.answered = true;
    SharedLibrary library(library_name);
    if (!library.loaded()) {
        report.notes.push_back(fmt::format("NVML ({}) is not available: {}", library_name, library.error()));
        report.faults.push_back({DriverFaultKind::nvml_missing, -1,
                                 fmt::format("NVML ({}) is not available: no NVIDIA driver in this container",
                                             library_name)});
        return report;
    }
    report.library_found = true;

    NvmlFunctions nvml;
    if (const std::string missing = nvml.load(library); !missing.empty()) {
        report.faults.push_back({DriverFaultKind::nvml_too_old, -1,
                                 fmt::format("{} lacks {}: the NVIDIA driver is too old or the library is not NVML",
                                             library_name, missing)});
        report.problem = true;
        return report;
    }
    if (const auto code = nvml.init(); code != nvml::SUCCESS) {
        report.faults.push_back({init_failure_kind(code), -1, init_failure_note(code, nvml)});
        report.problem = true;
        return report;
    }
    report.initialised = true;
    read_machine(nvml, library, workload, sysfs, report);
    // NVML stays loaded for the process (an unload leaks a descriptor of the
    // driver's each time, which --repeat would pile up), and its shutdown, a
    // few milliseconds, goes on beside the rest of the run.
    library.keep_loaded();
    // Kept until release_nvml(): the link counters are read again after the
    // copies in the same session, at the cost of a call, not of a start.
    if (after == NvmlAfterReading::shut_down) defer_shutdown(nvml.shutdown);
    return report;
}

void wait_for_nvml_shutdown(std::chrono::milliseconds limit) {
    release_nvml();
    std::unique_lock lock(pending_shutdowns().mutex);
    pending_shutdowns().ended.wait_for(lock, limit, [] { return pending_shutdowns().count == 0; });
}

std::vector<DriverFault> nvml_driver_faults(const NvmlReport& report) {
    if (report.answered) return report.faults;
    return {{DriverFaultKind::nvml_hang, -1,
             "NVML did not answer within the time limit: the NVIDIA driver or a GPU is hung; the GPUs could not be "
             "read through NVML"}};
}

}  // namespace provision
