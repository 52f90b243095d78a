#include "gpu/nvml_probe.h"

#include <type_traits>

#include <fmt/format.h>

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "gpu/shared_library.h"

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

    // The first required function the library lacks, or "".
    std::string load(const SharedLibrary& library) {
        std::string missing;
        auto require = [&](auto& slot, const char* symbol) {
            slot = library.symbol<std::remove_reference_t<decltype(slot)>>(symbol);
            if (!slot && missing.empty()) missing = symbol;
        };
        require(init, "nvmlInit_v2");
        require(shutdown, "nvmlShutdown");
        require(driver_version, "nvmlSystemGetDriverVersion");
        require(device_count, "nvmlDeviceGetCount_v2");
        require(handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
        require(name, "nvmlDeviceGetName");
        require(uuid, "nvmlDeviceGetUUID");
        require(memory, "nvmlDeviceGetMemoryInfo");
        error_string = library.symbol<nvml::ErrorStringFn>("nvmlErrorString");
        cuda_driver_version = library.symbol<nvml::SystemGetCudaDriverVersionFn>("nvmlSystemGetCudaDriverVersion_v2");
        compute_capability =
            library.symbol<nvml::DeviceGetCudaComputeCapabilityFn>("nvmlDeviceGetCudaComputeCapability");
        return missing;
    }

    std::string describe(nvml::Return code) const {
        const char* text = error_string ? error_string(code) : nullptr;
        return fmt::format("{} (NVML error {})", text ? text : "unknown error", static_cast<int>(code));
    }
};

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

std::string gpu_failure_note(unsigned index, const char* what, nvml::Return code, const NvmlFunctions& nvml) {
    if (code == nvml::ERROR_GPU_IS_LOST)
        return fmt::format("NVML's GPU {} has fallen off the bus or is otherwise inaccessible: the GPU needs a "
                           "reset or the node a reboot",
                           index);
    return fmt::format("NVML's GPU {} could not be read ({}: {})", index, what, nvml.describe(code));
}

// Fills one GPU, or returns the first failure as a note.
std::optional<std::string> read_gpu(const NvmlFunctions& nvml, unsigned index, NvmlGpu& out) {
    nvml::Device device = nullptr;
    nvml::Return code = nvml.handle_by_index(index, &device);
    if (code != nvml::SUCCESS) return gpu_failure_note(index, "nvmlDeviceGetHandleByIndex_v2", code, nvml);

    char name[nvml::name_buffer_size] = {};
    if ((code = nvml.name(device, name, sizeof name)) != nvml::SUCCESS)
        return gpu_failure_note(index, "nvmlDeviceGetName", code, nvml);
    out.gpu.name = name;

    char uuid[nvml::uuid_buffer_size] = {};
    if ((code = nvml.uuid(device, uuid, sizeof uuid)) != nvml::SUCCESS)
        return gpu_failure_note(index, "nvmlDeviceGetUUID", code, nvml);
    out.gpu.uuid = uuid;

    nvml::Memory memory{};
    if ((code = nvml.memory(device, &memory)) != nvml::SUCCESS)
        return gpu_failure_note(index, "nvmlDeviceGetMemoryInfo", code, nvml);
    out.gpu.memory_mib = memory.total / (1024 * 1024);

    if (nvml.compute_capability) {
        int major = 0, minor = 0;
        if ((code = nvml.compute_capability(device, &major, &minor)) != nvml::SUCCESS)
            return gpu_failure_note(index, "nvmlDeviceGetCudaComputeCapability", code, nvml);
        out.gpu.compute_capability = {major, minor};
        out.capability_known = true;
    }
    return std::nullopt;
}

void read_machine(const NvmlFunctions& nvml, NvmlReport& report) {
    char version[nvml::driver_version_buffer_size] = {};
    if (const auto code = nvml.driver_version(version, sizeof version); code == nvml::SUCCESS)
        report.driver_version = version;
    else
        report.notes.push_back(fmt::format("NVML could not read the driver version: {}", nvml.describe(code)));

    if (int cuda = 0; nvml.cuda_driver_version && nvml.cuda_driver_version(&cuda) == nvml::SUCCESS)
        report.cuda_version = cuda::version_text(cuda);

    unsigned count = 0;
    if (const auto code = nvml.device_count(&count); code != nvml::SUCCESS) {
        report.notes.push_back(fmt::format("NVML could not count the GPUs: {}", nvml.describe(code)));
        report.problem = true;
        return;
    }
    for (unsigned index = 0; index < count; ++index) {
        NvmlGpu entry;
        entry.gpu.nvml_index = static_cast<int>(index);
        if (auto failure = read_gpu(nvml, index, entry)) {
            entry.readable = false;
            report.notes.push_back(std::move(*failure));
            report.problem = true;
        }
        report.gpus.push_back(std::move(entry));
    }
}

}  // namespace

NvmlReport probe_nvml(const std::string& library_name) {
    NvmlReport report;
    SharedLibrary library(library_name);
    if (!library.loaded()) {
        report.notes.push_back(fmt::format("NVML ({}) is not available: {}", library_name, library.error()));
        return report;
    }
    report.library_found = true;

    NvmlFunctions nvml;
    if (const std::string missing = nvml.load(library); !missing.empty()) {
        report.notes.push_back(fmt::format("{} lacks {}: the NVIDIA driver is too old or the library is not NVML",
                                           library_name, missing));
        report.problem = true;
        return report;
    }
    if (const auto code = nvml.init(); code != nvml::SUCCESS) {
        report.notes.push_back(init_failure_note(code, nvml));
        report.problem = true;
        return report;
    }
    report.initialised = true;
    read_machine(nvml, report);
    nvml.shutdown();
    return report;
}

}  // namespace provision
