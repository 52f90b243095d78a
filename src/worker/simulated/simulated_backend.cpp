// The test builds' backend (fault-injection builds alone): the worker
// opens its GPU through the CUDA driver library alone (in the tests the
// fake libcuda of tests/fake_nvml, which can be slow to create a context or
// fail) and acts the rest out: a check in the GPU's range passes, others
// are unsupported; exports, imports and host memory go through the fake
// driver's cuMem and IPC calls as the real link checks' do; and the planted
// faults act as the real ones do.  So every path of the worker and its
// parent runs in CI, where no GPU is.
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/shared_library.h"
#include "gpu/cuda_api.h"
#include "kernels/check_catalog.h"
#include "worker/cumem_sharing.h"
#include "worker/gpu_backend.h"

namespace provision {

namespace {

using PrimaryCtxRetainFn = cuda::Result (*)(void**, cuda::Device);  // cuDevicePrimaryCtxRetain

std::string uuid_text(const cuda::Uuid& uuid) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                       b[15]);
}

// The fake driver's entry points.
struct Driver {
    explicit Driver(const std::string& name) : name(name), library(name) {}
    std::string name;
    SharedLibrary library;
    cuda::InitFn init = nullptr;
    cuda::DeviceGetFn device_get = nullptr;
    cuda::DeviceGetAttributeFn attribute = nullptr;
    cuda::DeviceGetUuidFn uuid = nullptr;
    PrimaryCtxRetainFn retain = nullptr;
    cumem::Driver cumem;
    cumem::Result (*ipc_get)(void*, std::uint64_t) = nullptr;
    cumem::Result (*ipc_open)(std::uint64_t*, const void*, unsigned) = nullptr;
    cumem::Result (*ipc_close)(std::uint64_t) = nullptr;
};

// What this process's GPUs exported on cuMem: the real sockets serving the
// fake driver's descriptors, kept until the process ends.
struct Exports {
    std::mutex mutex;
    std::vector<std::unique_ptr<cumem::SharedBuffer>> buffers;

    void keep(std::unique_ptr<cumem::SharedBuffer> buffer) {
        std::lock_guard lock(mutex);
        buffers.push_back(std::move(buffer));
    }
    // The allocation and size of one of them, by its socket.
    std::optional<std::pair<cumem::Handle, std::size_t>> find(const std::string& socket_name) {
        std::lock_guard lock(mutex);
        for (const auto& buffer : buffers)
            if (buffer->socket_name() == socket_name) return std::pair{buffer->handle(), buffer->size()};
        return std::nullopt;
    }
};
Exports& exports() {
    static Exports kept;
    return kept;
}

[[noreturn]] void hang() {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // the parent's limit ends it
}

// A check acted out on the GPU open() found: in its range it passes, or
// fails as planted; outside it, unsupported.
class ActedCheck final : public kernels::PreparedCheck {
public:
    ActedCheck(std::string name, std::string fault, const int* capability)
        : name_(std::move(name)), fault_(std::move(fault)), capability_(capability) {}

    kernels::CheckResult run(int) override {
        kernels::CheckResult result;
        result.name = name_;
        const kernels::CheckEntry* entry = kernels::find_check(name_);
        const int capability = *capability_;
        if (!entry) {
            result.status = kernels::CheckStatus::error;
            result.detail = fmt::format("unknown check '{}'", name_);
        } else if (capability < entry->min_capability || capability > entry->max_capability) {
            result.status = kernels::CheckStatus::unsupported;
            result.detail = fmt::format("needs {}; this GPU is sm_{} (simulated)", entry->hardware, capability);
        } else if (fault_ == "hang") {
            hang();
        } else if (fault_ == "wrong-result") {
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

private:
    std::string name_;
    std::string fault_;
    const int* capability_;  // the backend's, read once the GPU is open
};

// A link whose answer is acted out once the checks are done; a planted hang
// hangs there, as a real copy's would.
class ActedLink final : public PreparedLink {
public:
    ActedLink(std::string fault, std::function<std::string()> answer)
        : fault_(std::move(fault)), answer_(std::move(answer)) {}
    std::string finish() override {
        if (fault_ == "hang") hang();
        return answer_();
    }

private:
    std::string fault_;
    std::function<std::string()> answer_;
};

class SimulatedBackend final : public GpuBackend {
public:
    SimulatedBackend(int cuda_device, const std::string& library)
        : device_(cuda_device), driver_(std::make_unique<Driver>(library)) {}

    kernels::OpenedDevice open() override;

    std::unique_ptr<kernels::PreparedCheck> prepare_check(const std::string& name,
                                                          const kernels::CheckOptions& options) override {
        return std::make_unique<ActedCheck>(name, options.fault, &capability_);
    }

    ExportedLine export_buffer(const LinkCommand& command) override {
        ExportedLine exported{false, command.path, {}, {}};
        if (command.path == PeerPath::legacy_ipc) {
            const auto failure = export_legacy_handle();
            exported.ok = !failure;
            exported.handle = "simulated-" + std::to_string(command.gpu);
            exported.detail = failure ? failure->detail : "simulated";
            return exported;
        }
        cumem::Failure failure;
        auto shared = cumem::SharedBuffer::create(driver_->cumem, device_, command.bytes, failure);
        exported.ok = shared != nullptr;
        exported.handle = shared ? shared->socket_name() : std::string();
        exported.detail = shared ? "simulated" : failure.detail;
        if (shared) exports().keep(std::move(shared));
        return exported;
    }

    HostMemoryLine host_memory() override {
        const auto result = cumem::allocate_host_numa(driver_->cumem, device_, nullptr);
        return {result.ok, result.numa_node, result.ok ? "simulated" : result.failure.detail};
    }

    FabricHandleLine fabric_handle() override {
        const auto result = cumem::check_fabric_handle(driver_->cumem, device_, nullptr);
        if (!result.supported) return {FabricHandleStatus::unsupported, 0, result.failure.detail};
        return {result.ok ? FabricHandleStatus::passed : FabricHandleStatus::failed, result.failure.code,
                result.ok ? "simulated" : result.failure.detail};
    }

    // NCCL's id is 128 bytes, written as hex as the real worker writes it.
    NcclIdLine nccl_id(const LinkCommand&) override { return {true, std::string(256, 'a'), "simulated"}; }

    void stage_host_link(std::size_t) override {}  // the acted-out link copies nothing

    std::unique_ptr<PreparedLink> prepare_host_link(const LinkCommand&, const std::string& fault) override {
        return std::make_unique<ActedLink>(fault, [fault] {
            const double rate = fault == "slow" ? 0.5 : 100.0;
            return format_host_link_line({fault != "error", rate, rate, {}, "simulated"});
        });
    }

    std::unique_ptr<PreparedLink> prepare_pull(const LinkCommand& command, const std::string& fault) override;

    std::unique_ptr<PreparedLink> prepare_all_reduce(const LinkCommand&, const std::string& fault) override {
        return std::make_unique<ActedLink>(fault, [fault] {
            return fault == "error" ? format_nccl_line({false, 10, 0, 0, "simulated: error"})
                                    : format_nccl_line({true, 10, 1, 100, "simulated", "simulated"});
        });
    }

    void release() override {}

private:
    // The legacy IPC calls of the fake driver: nullopt, or the failed call.
    std::optional<cumem::Failure> export_legacy_handle() const;
    std::optional<cumem::Failure> open_legacy_handle() const;

    int device_;
    std::unique_ptr<Driver> driver_;
    int capability_ = 0;  // major * 10 + minor, once open
};

kernels::OpenedDevice SimulatedBackend::open() {
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
    cumem::Driver& m = d.cumem;
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
    } else if (const auto status = d.device_get(&handle, device_); status != cuda::SUCCESS) {
        device.detail = fmt::format("cuDeviceGet: CUDA error {}", static_cast<int>(status));
    } else if (const auto status = d.retain ? d.retain(&context, handle) : cuda::SUCCESS; status != cuda::SUCCESS) {
        device.detail = fmt::format("cuDevicePrimaryCtxRetain: CUDA error {}", static_cast<int>(status));
        // CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_DEVICE_UNAVAILABLE: no room for one more context.
        device.full = status == cuda::ERROR_OUT_OF_MEMORY || static_cast<int>(status) == 46;
    } else {
        d.attribute(&device.major, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
        d.attribute(&device.minor, cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
        cuda::Uuid uuid{};
        if (d.uuid && d.uuid(&uuid, handle) == cuda::SUCCESS) device.uuid = uuid_text(uuid);
        capability_ = device.major * 10 + device.minor;
        device.ok = true;
    }
    return device;
}

std::unique_ptr<PreparedLink> SimulatedBackend::prepare_pull(const LinkCommand& command, const std::string& fault) {
    // The opening now, as the real pull's; the answer after the checks.
    std::optional<cumem::Failure> failed;
    std::shared_ptr<cumem::ImportedBuffer> imported;
    if (command.path == PeerPath::legacy_ipc) {
        failed = open_legacy_handle();
    } else {
        cumem::Failure failure;
        if (const auto own = exports().find(command.handle)) {  // mapped again, as the real one
            imported = cumem::ImportedBuffer::map_own(driver_->cumem, device_, own->first, own->second, failure);
        } else {
            imported = cumem::ImportedBuffer::open(driver_->cumem, device_, command.handle, 30.0, failure);
        }
        if (!imported) failed = failure;
    }
    return std::make_unique<ActedLink>(fault, [command, fault, failed, imported]() mutable {
        PulledLine line;
        line.from = command.gpu;
        line.path = command.path;
        imported.reset();  // unmapped after the copy, as the real one is
        if (failed) {
            line.no_peer_access = failed->code == cumem::kErrorPeerAccessUnsupported;
            line.status = line.no_peer_access ? PeerCopyStatus::skipped : PeerCopyStatus::error;
            line.path_failed = !line.no_peer_access;
            line.detail = failed->detail;
            return format_pulled_line(line);
        }
        line.status = fault == "wrong-bytes" ? PeerCopyStatus::wrong_bytes
                      : fault == "error"     ? PeerCopyStatus::error
                                             : PeerCopyStatus::passed;
        line.no_peer_access = fault == "no-peer-access";
        if (line.no_peer_access) line.status = PeerCopyStatus::skipped;
        line.gb_per_s = fault == "slow" ? 0.5 : 1000.0;
        line.detail = fault.empty() ? "simulated" : "simulated: " + fault;
        return format_pulled_line(line);
    });
}

std::optional<cumem::Failure> SimulatedBackend::export_legacy_handle() const {
    if (!driver_->ipc_get) return cumem::Failure{"cuIpcGetMemHandle", -1, "cuIpcGetMemHandle: not in this driver"};
    char handle[64] = {};
    if (const auto code = driver_->ipc_get(handle, 1); code != 0)
        return cumem::Failure{"cuIpcGetMemHandle", code, cumem::describe(driver_->cumem, "cuIpcGetMemHandle", code)};
    return std::nullopt;
}

std::optional<cumem::Failure> SimulatedBackend::open_legacy_handle() const {
    if (!driver_->ipc_open) return cumem::Failure{"cuIpcOpenMemHandle", -1, "cuIpcOpenMemHandle: not in this driver"};
    const char handle[64] = {};
    std::uint64_t address = 0;
    if (const auto code = driver_->ipc_open(&address, handle, 1); code != 0)
        return cumem::Failure{"cuIpcOpenMemHandle", code, cumem::describe(driver_->cumem, "cuIpcOpenMemHandle", code)};
    if (driver_->ipc_close) driver_->ipc_close(address);
    return std::nullopt;
}

}  // namespace

std::unique_ptr<GpuBackend> make_simulated_backend(int cuda_device, const std::string& cuda_library) {
    return std::make_unique<SimulatedBackend>(cuda_device, cuda_library);
}

}  // namespace provision
