// A stand-in for libcuda.so.1 that reports the machine of
// PROVISION_FAKE_GPU_FIXTURE (see fake_machine.h).  Like the real driver it
// applies CUDA_VISIBLE_DEVICES at cuInit.  Built twice: as today's driver,
// and with FAKE_OLD_DRIVER as one that predates cuDeviceGetUuid_v2.
// Each cuInit appends a line to $PROVISION_FAKE_CUDA_INIT_LOG when it is
// set, so a test can tell whether the driver was started at all; each
// context creation (cuDevicePrimaryCtxRetain, which the [faults] key
// context_delay_ms slows down) appends "PID BEGIN_NS END_NS UUID" on the
// monotonic clock to $PROVISION_FAKE_CUDA_CONTEXT_LOG, so a test can count
// how many were under way at once.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "fake_machine.h"
#include "gpu/cuda_api.h"
#include "gpu/visible_devices.h"

namespace cuda = provision::cuda;

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Enumeration {
    std::shared_ptr<const fake::Machine> machine;
    std::vector<std::size_t> devices;  // CUDA ordinal -> fixture position
};

constexpr std::uint64_t reserved_mib = 480;

std::mutex state_mutex;
std::shared_ptr<const Enumeration> state;  // set by a successful cuInit

// The fixture position behind a CUdevice, or the error the call must return.
cuda::Result lookup(cuda::Device device, const char* function, std::shared_ptr<const Enumeration>& out,
                    std::size_t& gpu) {
    {
        std::lock_guard lock(state_mutex);
        out = state;
    }
    if (!out) return cuda::ERROR_NOT_INITIALIZED;
    if (device < 0 || static_cast<std::size_t>(device) >= out->devices.size()) return cuda::ERROR_INVALID_DEVICE;
    gpu = out->devices[static_cast<std::size_t>(device)];
    if (const int error = out->machine->failure(function, gpu)) return static_cast<cuda::Result>(error);
    return cuda::SUCCESS;
}

std::vector<std::size_t> enumerate(const fake::Machine& machine) {
    std::vector<std::size_t> order = machine.cuda_order;
    if (order.empty())
        for (std::size_t i = 0; i < machine.fixture.gpus.size(); ++i) order.push_back(i);
    std::erase_if(order, [&](std::size_t gpu) { return machine.lost(gpu); });

    std::vector<std::string> uuids;
    for (const std::size_t gpu : order) uuids.push_back(machine.fixture.gpus[gpu].uuid);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const auto selected = provision::select_visible_devices(
        uuids, visible ? std::optional<std::string>(visible) : std::nullopt);
    std::vector<std::size_t> devices;
    for (const std::size_t position : selected.positions) devices.push_back(order[position]);
    return devices;
}

cuda::Uuid uuid_bytes(const std::string& text) {  // "GPU-xxxxxxxx-..." -> 16 bytes
    cuda::Uuid uuid{};
    std::string hex;
    for (const char c : text.substr(4))
        if (c != '-') hex += c;
    for (std::size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); ++i)
        uuid.bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    return uuid;
}

void record_init() {
    const char* log = std::getenv("PROVISION_FAKE_CUDA_INIT_LOG");
    if (!log || !*log) return;
    if (std::FILE* file = std::fopen(log, "a")) {
        std::fprintf(file, "cuInit %d\n", static_cast<int>(getpid()));
        std::fclose(file);
    }
}

}  // namespace

FAKE_EXPORT cuda::Result cuDriverGetVersion(int* version) {
    if (!version) return cuda::ERROR_INVALID_VALUE;
    const auto machine = fake::load_machine("fake libcuda");
    if (!machine) return cuda::ERROR_UNKNOWN;
    *version = fake::cuda_version_number(machine->fixture.driver.cuda);
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuInit(unsigned flags) {
    record_init();
    if (flags != 0) return cuda::ERROR_INVALID_VALUE;
    auto machine = fake::load_machine("fake libcuda");
    if (!machine) return cuda::ERROR_UNKNOWN;
    if (machine->cuda_init_delay_ms > 0) {
        // A hung driver: the caller has given up by the time this returns.
        std::this_thread::sleep_for(std::chrono::milliseconds(machine->cuda_init_delay_ms));
        return cuda::ERROR_UNKNOWN;
    }
    if (machine->cuda_init_error) return static_cast<cuda::Result>(machine->cuda_init_error);
    auto enumeration = std::make_shared<Enumeration>();
    enumeration->devices = enumerate(*machine);
    enumeration->machine = std::move(machine);
    const bool none = enumeration->devices.empty();
    std::lock_guard lock(state_mutex);
    state = none ? nullptr : std::move(enumeration);
    return none ? cuda::ERROR_NO_DEVICE : cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuGetErrorString(cuda::Result code, const char** text) {
    if (!text) return cuda::ERROR_INVALID_VALUE;
    switch (code) {
        case cuda::SUCCESS: *text = "no error"; break;
        case cuda::ERROR_NOT_INITIALIZED: *text = "initialization error"; break;
        case cuda::ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
        case cuda::ERROR_INVALID_DEVICE: *text = "invalid device ordinal"; break;
        case cuda::ERROR_SYSTEM_DRIVER_MISMATCH:
            *text = "system has unsupported display driver / cuda driver combination";
            break;
        default: *text = "unknown error"; break;
    }
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuDeviceGetCount(int* count) {
    if (!count) return cuda::ERROR_INVALID_VALUE;
    std::lock_guard lock(state_mutex);
    if (!state) return cuda::ERROR_NOT_INITIALIZED;
    *count = static_cast<int>(state->devices.size());
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuDeviceGet(cuda::Device* device, int ordinal) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(ordinal, "cuDeviceGet", current, gpu); code != cuda::SUCCESS) return code;
    if (!device) return cuda::ERROR_INVALID_VALUE;
    *device = ordinal;
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuDeviceGetName(char* name, int length, cuda::Device device) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "cuDeviceGetName", current, gpu); code != cuda::SUCCESS) return code;
    if (!name || length <= 0) return cuda::ERROR_INVALID_VALUE;
    const std::string& text = current->machine->fixture.gpus[gpu].name;
    const std::size_t size = std::min(text.size(), static_cast<std::size_t>(length - 1));  // truncates, as CUDA does
    std::memcpy(name, text.data(), size);
    name[size] = '\0';
    return cuda::SUCCESS;
}

static cuda::Result device_uuid(cuda::Uuid* uuid, cuda::Device device, const char* function) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, function, current, gpu); code != cuda::SUCCESS) return code;
    if (!uuid) return cuda::ERROR_INVALID_VALUE;
    *uuid = uuid_bytes(current->machine->fixture.gpus[gpu].uuid);
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuDeviceGetUuid(cuda::Uuid* uuid, cuda::Device device) {
    return device_uuid(uuid, device, "cuDeviceGetUuid");
}

#ifndef FAKE_OLD_DRIVER
FAKE_EXPORT cuda::Result cuDeviceGetUuid_v2(cuda::Uuid* uuid, cuda::Device device) {
    return device_uuid(uuid, device, "cuDeviceGetUuid_v2");
}
#endif

FAKE_EXPORT cuda::Result cuDeviceGetAttribute(int* value, cuda::DeviceAttribute attribute, cuda::Device device) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "cuDeviceGetAttribute", current, gpu); code != cuda::SUCCESS) return code;
    if (!value) return cuda::ERROR_INVALID_VALUE;
    const auto& capability = current->machine->fixture.gpus[gpu].compute_capability;
    switch (attribute) {
        case cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = capability.major; return cuda::SUCCESS;
        case cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = capability.minor; return cuda::SUCCESS;
        default: return cuda::ERROR_INVALID_VALUE;
    }
}

FAKE_EXPORT cuda::Result cuDeviceTotalMem_v2(std::size_t* bytes, cuda::Device device) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "cuDeviceTotalMem_v2", current, gpu); code != cuda::SUCCESS) return code;
    if (!bytes) return cuda::ERROR_INVALID_VALUE;
    // Like the real driver, less than NVML's total: what the driver reserves
    // is left out (480 MiB on an H100 with driver 580).
    const std::uint64_t mib = current->machine->fixture.gpus[gpu].memory_mib;
    *bytes = (mib > reserved_mib ? mib - reserved_mib : 0) * 1024ULL * 1024ULL;
    return cuda::SUCCESS;
}

static std::int64_t monotonic_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// One write(2) of one line with O_APPEND: lines of processes that create
// contexts at once never mix.
static void record_context(std::int64_t begin, std::int64_t end, const std::string& uuid) {
    const char* log = std::getenv("PROVISION_FAKE_CUDA_CONTEXT_LOG");
    if (!log || !*log) return;
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string line = std::to_string(getpid()) + " " + std::to_string(begin) + " " + std::to_string(end) + " " +
                             uuid + "\n";
    [[maybe_unused]] const ssize_t written = write(fd, line.data(), line.size());
    close(fd);
}

FAKE_EXPORT cuda::Result cuDevicePrimaryCtxRetain(void** context, cuda::Device device) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (const auto code = lookup(device, "cuDevicePrimaryCtxRetain", current, gpu); code != cuda::SUCCESS) return code;
    if (!context) return cuda::ERROR_INVALID_VALUE;
    const std::int64_t begin = monotonic_ns();
    if (current->machine->context_delay_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(current->machine->context_delay_ms));
    record_context(begin, monotonic_ns(), current->machine->fixture.gpus[gpu].uuid);
    static int primary_context;  // any non-null handle will do
    *context = &primary_context;
    return cuda::SUCCESS;
}
