#include "gpu/cuda_probe.h"

#include <optional>

#include <fmt/format.h>

#include "core/shared_library.h"
#include "gpu/cuda_api.h"

namespace provision {

namespace {

struct CudaFunctions {
    cuda::InitFn init = nullptr;
    cuda::DriverGetVersionFn driver_version = nullptr;
    cuda::DeviceGetCountFn device_count = nullptr;
    cuda::DeviceGetFn device = nullptr;
    cuda::DeviceGetNameFn name = nullptr;
    cuda::DeviceGetAttributeFn attribute = nullptr;
    cuda::DeviceTotalMemFn total_memory = nullptr;
    // _v2 gives a MIG instance's own UUID; the original gives the physical GPU's.
    cuda::DeviceGetUuidFn uuid = nullptr;
    cuda::DeviceGetUuidFn physical_uuid = nullptr;
    cuda::GetErrorStringFn error_string = nullptr;

    // The first required function the library lacks, or "".
    std::string load(const SharedLibrary& library) {
        return library.resolve({
            Symbol::required(init, "cuInit"),
            Symbol::required(driver_version, "cuDriverGetVersion"),
            Symbol::required(device_count, "cuDeviceGetCount"),
            Symbol::required(device, "cuDeviceGet"),
            Symbol::required(name, "cuDeviceGetName"),
            Symbol::required(attribute, "cuDeviceGetAttribute"),
            Symbol::required(total_memory, "cuDeviceTotalMem_v2"),
            Symbol::required(uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}),
            Symbol::optional(physical_uuid, "cuDeviceGetUuid"),
            Symbol::optional(error_string, "cuGetErrorString"),
        });
    }

    std::string describe(cuda::Result code) const {
        const char* text = nullptr;
        if (error_string && error_string(code, &text) != cuda::SUCCESS) text = nullptr;
        return fmt::format("{} (CUDA error {})", text ? text : "unknown error", static_cast<int>(code));
    }
};

std::string init_failure_note(cuda::Result code, const CudaFunctions& cuda) {
    switch (code) {
        case cuda::ERROR_SYSTEM_DRIVER_MISMATCH:
            return "the CUDA driver library in the container does not match the host's kernel driver (CUDA error "
                   "803): the image probably ships its own libcuda (a cuda-compat package); remove it, or run on a "
                   "host with a matching driver";
        case cuda::ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
            return "the container's CUDA forward-compatibility libraries (cuda-compat) do not support this GPU "
                   "(CUDA error 804): remove them from the image or use a newer host driver";
        case cuda::ERROR_SYSTEM_NOT_READY:
            return "CUDA cannot start yet (CUDA error 802, 'system not yet initialized'): on an NVSwitch machine "
                   "(HGX, DGX) the fabric manager has not set up the fabric; start the host's nvidia-fabricmanager "
                   "service, of the same version as the driver";
        case cuda::ERROR_INSUFFICIENT_DRIVER:
            return "the host's NVIDIA driver is too old for this CUDA driver library (CUDA error 35): update the "
                   "host driver";
        default:
            return fmt::format("the CUDA driver failed to start: {}; CUDA programs will not see the GPUs",
                               cuda.describe(code));
    }
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or "MIG-..."), nvidia-smi's spelling.
std::string uuid_text(const char* kind, const cuda::Uuid& uuid) {
    std::string hex;
    for (const char byte : uuid.bytes) hex += fmt::format("{:02x}", static_cast<unsigned char>(byte));
    return fmt::format("{}-{}-{}-{}-{}-{}", kind, hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                       hex.substr(16, 4), hex.substr(20));
}

std::optional<std::string> read_device(const CudaFunctions& cuda, int ordinal, CudaDevice& out) {
    auto failed = [&](const char* what, cuda::Result code) {
        return fmt::format("CUDA device {} could not be read ({}: {}), so it is left out", ordinal, what,
                           cuda.describe(code));
    };
    cuda::Device device = 0;
    cuda::Result code = cuda.device(&device, ordinal);
    if (code != cuda::SUCCESS) return failed("cuDeviceGet", code);

    char name[256] = {};
    if ((code = cuda.name(name, sizeof name, device)) != cuda::SUCCESS) return failed("cuDeviceGetName", code);
    cuda::Uuid uuid{};
    if ((code = cuda.uuid(&uuid, device)) != cuda::SUCCESS) return failed("cuDeviceGetUuid", code);
    int major = 0, minor = 0;
    if ((code = cuda.attribute(&major, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)) != cuda::SUCCESS ||
        (code = cuda.attribute(&minor, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)) != cuda::SUCCESS)
        return failed("cuDeviceGetAttribute", code);
    std::size_t bytes = 0;
    if ((code = cuda.total_memory(&bytes, device)) != cuda::SUCCESS) return failed("cuDeviceTotalMem_v2", code);

    out.gpu.index = ordinal;
    out.gpu.name = name;
    out.gpu.uuid = uuid_text("GPU", uuid);
    out.gpu.compute_capability = {major, minor};
    out.gpu.memory_mib = bytes / (1024 * 1024);
    // A device whose own UUID differs from its physical GPU's is a MIG instance.
    if (cuda::Uuid physical{}; cuda.physical_uuid && cuda.physical_uuid != cuda.uuid &&
                               cuda.physical_uuid(&physical, device) == cuda::SUCCESS &&
                               uuid_text("GPU", physical) != out.gpu.uuid) {
        out.parent_uuid = uuid_text("GPU", physical);
        out.gpu.uuid = uuid_text("MIG", uuid);
    }
    return std::nullopt;
}

}  // namespace

CudaReport probe_cuda(const std::string& library_name, const std::function<bool()>& enumerate) {
    CudaReport report;
    SharedLibrary library(library_name);
    if (!library.loaded()) {
        report.notes.push_back(fmt::format("the CUDA driver ({}) is not available: {}", library_name, library.error()));
        return report;
    }
    report.library_found = true;
    library.keep_loaded();

    CudaFunctions cuda;
    if (const std::string missing = cuda.load(library); !missing.empty()) {
        report.notes.push_back(fmt::format("{} lacks {}: the NVIDIA driver is too old or the library is not libcuda",
                                           library_name, missing));
        report.problem = true;
        return report;
    }
    if (!enumerate()) return report;
    if (int version = 0; cuda.driver_version(&version) == cuda::SUCCESS) report.cuda_version = cuda::version_text(version);

    const cuda::Result code = cuda.init(0);
    if (code == cuda::ERROR_NO_DEVICE) {  // normal with CUDA_VISIBLE_DEVICES="" or no GPU
        report.initialised = true;
        return report;
    }
    if (code != cuda::SUCCESS) {
        report.notes.push_back(init_failure_note(code, cuda));
        report.problem = true;
        return report;
    }
    report.initialised = true;

    int count = 0;
    if (const cuda::Result count_code = cuda.device_count(&count); count_code != cuda::SUCCESS) {
        report.notes.push_back(fmt::format("the CUDA driver could not count the GPUs: {}", cuda.describe(count_code)));
        report.problem = true;
        return report;
    }
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CudaDevice device;
        if (auto failure = read_device(cuda, ordinal, device)) {
            report.notes.push_back(std::move(*failure));
            report.problem = true;
            continue;
        }
        report.devices.push_back(std::move(device));
    }
    return report;
}

}  // namespace provision
