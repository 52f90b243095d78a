#include "gpu/detect.h"

#include <cstdlib>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/setting_values.h"
#include "gpu/cuda_probe.h"
#include "gpu/nvml_probe.h"
#include "gpu/nvml_stand_in.h"
#include "gpu/xid_log.h"
#include "gpu/visible_devices.h"

namespace provision {

namespace {

// Runs `probe` on a detached thread: a call stuck in the driver keeps only
// that thread, which ends with the process (or the exec of the workload).
template <typename Probe>
auto start_probe(Probe probe) -> std::future<decltype(probe())> {
    std::promise<decltype(probe())> promise;
    auto future = promise.get_future();
    std::thread([promise = std::move(promise), probe = std::move(probe)]() mutable {
        try {
            promise.set_value(probe());
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
    }).detach();
    return future;
}

// The probe's report, or one that says it did not answer in time.
template <typename Report>
Report finish_probe(std::future<Report>& future, std::chrono::steady_clock::time_point deadline,
                    std::chrono::milliseconds limit, const char* what) {
    if (future.wait_until(deadline) == std::future_status::ready) return future.get();
    Report report;
    report.library_found = true;
    report.problem = true;
    report.notes.push_back(fmt::format(
        "{} did not answer within {:g} s: the NVIDIA driver or a GPU is hung; detection went on without it",
        what, static_cast<double>(limit.count()) / 1000.0));
    return report;
}

// CUDA's list is the workload's: take it, and find each GPU in NVML's list.
void take_cuda_devices(const NvmlReport& nvml, const CudaReport& cuda, Inventory& inventory) {
    std::vector<bool> matched(nvml.gpus.size(), false);
    for (const CudaDevice& device : cuda.devices) {
        Gpu gpu = device.gpu;
        for (std::size_t i = 0; i < nvml.gpus.size(); ++i) {
            const std::string& uuid = nvml.gpus[i].gpu.uuid;
            if (!uuid.empty() && (uuid == gpu.uuid || uuid == device.parent_uuid)) {
                gpu.nvml_index = nvml.gpus[i].gpu.nvml_index;
                gpu.health = nvml.gpus[i].gpu.health;  // a MIG instance shares its GPU's
                gpu.nvlinks = nvml.gpus[i].gpu.nvlinks;  // and its links
                gpu.nvlink_generation = nvml.gpus[i].gpu.nvlink_generation;
                gpu.pcie = nvml.gpus[i].gpu.pcie;
                gpu.pci_bus_id = nvml.gpus[i].gpu.pci_bus_id;
                gpu.fabric = nvml.gpus[i].gpu.fabric;
                // NVML's total is the figure nvidia-smi shows (libcuda's leaves out
                // what the driver reserves); a MIG instance keeps its own.
                if (uuid == gpu.uuid && nvml.gpus[i].gpu.memory_mib > 0) gpu.memory_mib = nvml.gpus[i].gpu.memory_mib;
                matched[i] = true;
                break;
            }
        }
        inventory.gpus.push_back(std::move(gpu));
    }
    for (std::size_t i = 0; i < nvml.gpus.size(); ++i)
        if (nvml.gpus[i].readable && !matched[i]) ++inventory.hidden_gpus;
}

// libcuda applies CUDA_VISIBLE_DEVICES silently; say which entries it
// ignored.  Whether an entry is valid does not depend on CUDA's order, so
// NVML's list serves, except for MIG instances, which NVML does not list.
void explain_visible_devices(const NvmlReport& nvml, const std::optional<std::string>& cuda_visible_devices,
                             Inventory& inventory) {
    if (!nvml.initialised || !cuda_visible_devices || cuda_visible_devices->find("MIG-") != std::string::npos)
        return;
    std::vector<std::string> uuids;
    for (const NvmlGpu& entry : nvml.gpus) uuids.push_back(entry.gpu.uuid);
    for (auto& note : select_visible_devices(uuids, cuda_visible_devices).notes)
        inventory.notes.push_back(std::move(note));
}

// Without libcuda, NVML's list stands in for CUDA's (NVML's order is PCI bus
// order, which is CUDA's when CUDA_DEVICE_ORDER=PCI_BUS_ID).
void take_nvml_gpus(const NvmlReport& nvml, const std::optional<std::string>& cuda_visible_devices,
                    Inventory& inventory) {
    std::vector<Gpu> host;
    for (const NvmlGpu& entry : nvml.gpus) host.push_back(entry.gpu);
    apply_visible_devices(host, cuda_visible_devices, inventory);
    std::erase_if(inventory.gpus, [&](const Gpu& gpu) { return !nvml.gpus[gpu.nvml_index].readable; });
    for (const Gpu& gpu : inventory.gpus)
        if (!nvml.gpus[gpu.nvml_index].capability_known)
            inventory.notes.push_back(fmt::format(
                "the compute capability of GPU {} ({}) is unknown: this driver's NVML cannot report it and libcuda "
                "did not answer",
                gpu.index, gpu.name));
}

Inventory combine(const NvmlReport& nvml, const CudaReport& cuda, const DetectOptions& options) {
    Inventory inventory;
    inventory.driver_faults = nvml_driver_faults(nvml);
    if (!nvml.library_found && !cuda.library_found) {
        inventory.notes.push_back(fmt::format(
            "no NVIDIA driver library found ({}, {}): treated as a machine without NVIDIA GPUs",
            options.nvml_library, options.cuda_library));
        return inventory;
    }
    inventory.source = InventorySource::driver;
    // libcuda answering "no device" says nothing about the driver (CUDA_VISIBLE_DEVICES="" does that too).
    inventory.driver.present = nvml.initialised || !cuda.devices.empty();
    inventory.driver.version = nvml.driver_version;
    inventory.driver.cuda = nvml.cuda_version.empty() ? cuda.cuda_version : nvml.cuda_version;
    inventory.driver_problem = nvml.problem || cuda.problem;
    inventory.notes = nvml.notes;
    inventory.notes.insert(inventory.notes.end(), cuda.notes.begin(), cuda.notes.end());

    if (cuda.initialised) {
        take_cuda_devices(nvml, cuda, inventory);
        explain_visible_devices(nvml, options.cuda_visible_devices, inventory);
        if (inventory.gpus.empty() && inventory.hidden_gpus > 0 && !options.cuda_visible_devices) {
            inventory.notes.push_back(fmt::format(
                "NVML sees {} GPU{} but CUDA sees none: CUDA programs in this container cannot use them",
                inventory.hidden_gpus, inventory.hidden_gpus == 1 ? "" : "s"));
            inventory.driver_problem = true;
        }
    } else if (nvml.initialised) {
        take_nvml_gpus(nvml, options.cuda_visible_devices, inventory);
        if (!cuda.library_found && !nvml.gpus.empty()) {
            inventory.notes.push_back(fmt::format(
                "NVML sees the GPUs but {} is missing: CUDA programs in this container cannot use them; the "
                "container was probably started without the 'compute' driver capability "
                "(NVIDIA_DRIVER_CAPABILITIES)",
                options.cuda_library));
            inventory.driver_problem = true;
        }
    }
    std::vector<int> nvml_indices;
    for (const Gpu& gpu : inventory.gpus) nvml_indices.push_back(gpu.nvml_index);
    inventory.pairs = visible_pairs(nvml_indices, nvml.topology);
    return inventory;
}


// Each GPU's Xids, by its PCI bus id; every GPU's "not read" where the log was not.
void assign_xids(const XidLog& log, Inventory& inventory) {
    if (!log.read) {
        inventory.kernel_log_unread = log.why_not;
        return;
    }
    if (std::string note = xid_log_cut_note(log); !note.empty()) inventory.notes.push_back(std::move(note));
    for (Gpu& gpu : inventory.gpus) {
        if (gpu.pci_bus_id.empty()) continue;  // not known: not told apart
        std::vector<XidEvent>& mine = gpu.health.xids.emplace();
        for (const XidEvent& event : log.events)
            if (same_gpu_bus(event.bus_id, gpu.pci_bus_id)) mine.push_back(event);
    }
}

}  // namespace

Inventory detect_gpus(const DetectOptions& options) {
    const auto deadline = std::chrono::steady_clock::now() + options.time_limit;
    // libcuda loads beside NVML, then waits for NVML's answer to learn
    // whether it must start at all.  An NVML that has not answered within a
    // quarter of the limit lets it go ahead, so a hung NVML still leaves
    // libcuda's answer in time.
    std::promise<bool> enumerate;
    auto cuda_future = start_probe([library = options.cuda_library, decision = enumerate.get_future().share(),
                                    grace = options.time_limit / 4] {
        return probe_cuda(library, [&] {
            return decision.wait_for(grace) != std::future_status::ready || decision.get();
        });
    });
    // The kernel's log beside the drivers: a few milliseconds where it can be read at all.
    auto xid_future = std::async(std::launch::async, [path = options.kernel_log] { return read_xid_log(path); });
    auto nvml_future = start_probe([library = options.nvml_library,
                                    workload = CudaEnvironment{options.cuda_visible_devices, options.cuda_device_order},
                                    after = options.nvml_after_reading, sysfs = options.sysfs] {
        return probe_nvml(library, workload, after, sysfs);
    });
    const NvmlReport nvml = finish_probe(nvml_future, deadline, options.time_limit, "NVML");
    enumerate.set_value(why_libcuda_is_needed(nvml, {options.cuda_visible_devices, options.cuda_device_order})
                            .has_value());
    const CudaReport cuda = finish_probe(cuda_future, deadline, options.time_limit, "libcuda (cuInit)");
    Inventory inventory = combine(nvml, cuda, options);
    assign_xids(xid_future.get(), inventory);
    return inventory;
}

}  // namespace provision
