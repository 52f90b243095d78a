#include "validate/simulated_device.h"

#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "check_catalog.h"
#include "core/shared_library.h"
#include "gpu/cuda_api.h"

namespace provision {

namespace {

using PrimaryCtxRetainFn = cuda::Result (*)(void**, cuda::Device);  // cuDevicePrimaryCtxRetain

std::string uuid_text(const cuda::Uuid& uuid) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                       b[15]);
}

}  // namespace

struct SimulatedDevice::Driver {
    explicit Driver(const std::string& name) : name(name), library(name) {}
    std::string name;
    SharedLibrary library;
    cuda::InitFn init = nullptr;
    cuda::DeviceGetFn device_get = nullptr;
    cuda::DeviceGetAttributeFn attribute = nullptr;
    cuda::DeviceGetUuidFn uuid = nullptr;
    PrimaryCtxRetainFn retain = nullptr;
    kernels::cumem::Driver cumem;
    kernels::cumem::Result (*ipc_get)(void*, std::uint64_t) = nullptr;
    kernels::cumem::Result (*ipc_open)(std::uint64_t*, const void*, unsigned) = nullptr;
    kernels::cumem::Result (*ipc_close)(std::uint64_t) = nullptr;
};

SimulatedDevice::SimulatedDevice(const std::string& library) : driver_(std::make_unique<Driver>(library)) {}
SimulatedDevice::~SimulatedDevice() = default;

kernels::OpenedDevice SimulatedDevice::open(int cuda_device) {
    kernels::OpenedDevice device;
    Driver& d = *driver_;
    if (!d.library.loaded()) {
        device.detail = fmt::format("cannot load {}: {}", d.name, d.library.error());
        return device;
    }
    d.library.keep_loaded();
    const std::string lacking = d.library.resolve({
        Symbol::required(d.init, "cuInit"),
        Symbol::required(d.device_get, "cuDeviceGet"),
        Symbol::required(d.attribute, "cuDeviceGetAttribute"),
        Symbol::optional(d.uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}),
        Symbol::optional(d.retain, "cuDevicePrimaryCtxRetain"),
    });
    if (!lacking.empty()) {
        device.detail = fmt::format("{} lacks {}", d.name, lacking);
        return device;
    }
    kernels::cumem::Driver& m = d.cumem;
    d.library.resolve({
        Symbol::optional(m.device_get, "cuDeviceGet"),
        Symbol::optional(m.device_attribute, "cuDeviceGetAttribute"),
        Symbol::optional(m.granularity, "cuMemGetAllocationGranularity"),
        Symbol::optional(m.create, "cuMemCreate"),
        Symbol::optional(m.release, "cuMemRelease"),
        Symbol::optional(m.address_reserve, "cuMemAddressReserve"),
        Symbol::optional(m.address_free, "cuMemAddressFree"),
        Symbol::optional(m.map, "cuMemMap"),
        Symbol::optional(m.unmap, "cuMemUnmap"),
        Symbol::optional(m.set_access, "cuMemSetAccess"),
        Symbol::optional(m.export_handle, "cuMemExportToShareableHandle"),
        Symbol::optional(m.import_handle, "cuMemImportFromShareableHandle"),
        Symbol::optional(m.error_name, "cuGetErrorName"),
        Symbol::optional(d.ipc_get, "cuIpcGetMemHandle"),
        Symbol::optional(d.ipc_open, "cuIpcOpenMemHandle_v2"),
        Symbol::optional(d.ipc_close, "cuIpcCloseMemHandle"),
    });
    cuda::Device handle = 0;
    void* context = nullptr;
    if (const auto status = d.init(0); status != cuda::SUCCESS) {
        device.detail = fmt::format("cuInit: CUDA error {}", static_cast<int>(status));
        if (status == cuda::ERROR_SYSTEM_NOT_READY)
            device.detail += "; on an NVSwitch machine (HGX, DGX) the fabric is not set up yet: start the host's "
                             "nvidia-fabricmanager service, of the same version as the driver";
    } else if (const auto status = d.device_get(&handle, cuda_device); status != cuda::SUCCESS) {
        device.detail = fmt::format("cuDeviceGet: CUDA error {}", static_cast<int>(status));
    } else if (const auto status = d.retain ? d.retain(&context, handle) : cuda::SUCCESS; status != cuda::SUCCESS) {
        device.detail = fmt::format("cuDevicePrimaryCtxRetain: CUDA error {}", static_cast<int>(status));
        // CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_DEVICE_UNAVAILABLE: no room for one more context.
        device.full = status == cuda::ERROR_OUT_OF_MEMORY || static_cast<int>(status) == 46;
    } else {
        d.attribute(&major_, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
        d.attribute(&minor_, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
        cuda::Uuid uuid{};
        if (d.uuid && d.uuid(&uuid, handle) == cuda::SUCCESS) device.uuid = uuid_text(uuid);
        device.major = major_;
        device.minor = minor_;
        device.ok = true;
    }
    return device;
}

kernels::CheckResult SimulatedDevice::run(const std::string& name, const std::string& fault) const {
    kernels::CheckResult result;
    result.name = name;
    const kernels::CheckEntry* entry = kernels::find_check(name);
    const int capability = major_ * 10 + minor_;
    if (!entry) {
        result.status = kernels::CheckStatus::error;
        result.detail = fmt::format("unknown check '{}'", name);
    } else if (capability < entry->min_capability || capability > entry->max_capability) {
        result.status = kernels::CheckStatus::unsupported;
        result.detail = fmt::format("needs {}; this GPU is sm_{}{} (simulated)", entry->hardware, major_, minor_);
    } else if (fault == "hang") {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // the parent's limit ends it
    } else if (fault == "wrong-result") {
        result.status = kernels::CheckStatus::failed;
        result.max_rel_error = 0.5;
        result.tolerance = 0.01;
        result.detail = "simulated: a planted wrong result";
    } else {
        result.status = kernels::CheckStatus::passed;
        result.max_rel_error = 0.001;
        result.tolerance = 0.004;
        result.ms = 1.0;
        result.detail = "simulated";
    }
    return result;
}

const kernels::cumem::Driver& SimulatedDevice::cumem_driver() const { return driver_->cumem; }

std::optional<kernels::cumem::Failure> SimulatedDevice::export_legacy_handle() const {
    if (!driver_->ipc_get) return kernels::cumem::Failure{"cuIpcGetMemHandle", -1, "cuIpcGetMemHandle: not in this driver"};
    char handle[64] = {};
    if (const auto code = driver_->ipc_get(handle, 1); code != 0)
        return kernels::cumem::Failure{"cuIpcGetMemHandle", code, kernels::cumem::describe(driver_->cumem, "cuIpcGetMemHandle", code)};
    return std::nullopt;
}

std::optional<kernels::cumem::Failure> SimulatedDevice::open_legacy_handle() const {
    if (!driver_->ipc_open)
        return kernels::cumem::Failure{"cuIpcOpenMemHandle", -1, "cuIpcOpenMemHandle: not in this driver"};
    const char handle[64] = {};
    std::uint64_t address = 0;
    if (const auto code = driver_->ipc_open(&address, handle, 1); code != 0)
        return kernels::cumem::Failure{"cuIpcOpenMemHandle", code,
                                       kernels::cumem::describe(driver_->cumem, "cuIpcOpenMemHandle", code)};
    if (driver_->ipc_close) driver_->ipc_close(address);
    return std::nullopt;
}

}  // namespace provision
