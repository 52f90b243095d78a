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
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <atomic>
#include <sys/mman.h>
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
    switch (static_cast<int>(code)) {  // codes beyond the declared enumerators too
        case cuda::SUCCESS: *text = "no error"; break;
        case cuda::ERROR_NOT_INITIALIZED: *text = "initialization error"; break;
        case cuda::ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
        case cuda::ERROR_INVALID_DEVICE: *text = "invalid device ordinal"; break;
        case cuda::ERROR_SYSTEM_DRIVER_MISMATCH:
            *text = "system has unsupported display driver / cuda driver combination";
            break;
        case cuda::ERROR_SYSTEM_NOT_READY: *text = "system not yet initialized"; break;
        case 400: *text = "invalid resource handle"; break;
        case 800: *text = "operation not permitted"; break;
        default: *text = "unknown error"; break;
    }
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuGetErrorName(cuda::Result code, const char** text) {
    if (!text) return cuda::ERROR_INVALID_VALUE;
    switch (static_cast<int>(code)) {  // codes beyond the declared enumerators too
        case cuda::SUCCESS: *text = "CUDA_SUCCESS"; break;
        case cuda::ERROR_OUT_OF_MEMORY: *text = "CUDA_ERROR_OUT_OF_MEMORY"; break;
        case cuda::ERROR_INVALID_DEVICE: *text = "CUDA_ERROR_INVALID_DEVICE"; break;
        case 217: *text = "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"; break;
        case cuda::ERROR_OPERATING_SYSTEM: *text = "CUDA_ERROR_OPERATING_SYSTEM"; break;
        case cuda::ERROR_SYSTEM_NOT_READY: *text = "CUDA_ERROR_SYSTEM_NOT_READY"; break;
        case 400: *text = "CUDA_ERROR_INVALID_HANDLE"; break;
        case 800: *text = "CUDA_ERROR_NOT_PERMITTED"; break;
        default: *text = "CUDA_ERROR_UNKNOWN"; break;
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
    switch (static_cast<int>(attribute)) {  // attributes beyond the declared enumerators too
        case cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = capability.major; return cuda::SUCCESS;
        case cuda::ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = capability.minor; return cuda::SUCCESS;
        case 102: *value = 1; return cuda::SUCCESS;  // virtual memory management (cuMem)
        case 103: *value = 1; return cuda::SUCCESS;  // cuMem memory exported as a file descriptor
        case 134: *value = current->machine->host_numa_id; return cuda::SUCCESS;  // its host NUMA node
        case 128: *value = current->machine->fabric_handles ? 1 : 0; return cuda::SUCCESS;  // fabric handles
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

// Waits until the callers of one group of `group` have arrived, counted
// across processes in the file `path` (one byte an arrival, added under an
// exclusive lock): the k-th caller waits for the group's last, k rounded up
// to a multiple of `group`, 30 s at most.  Callers under way at once meet
// however slow the machine is (a wait needs no processor); callers that run
// one after the other never do, and their wait runs out.
static void meet(const std::string& path, int group) {
    if (group <= 1) return;
    const int fd = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    flock(fd, LOCK_EX);
    [[maybe_unused]] const ssize_t added = write(fd, "x", 1);
    struct stat after {};
    fstat(fd, &after);
    flock(fd, LOCK_UN);
    const auto arrived = static_cast<long long>(after.st_size);
    const long long last_of_group = (arrived + group - 1) / group * group;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (struct stat now {}; fstat(fd, &now) == 0 && now.st_size < last_of_group &&
                             std::chrono::steady_clock::now() < give_up;)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    close(fd);
}

// The meeting file beside a log named by `variable`; empty without the log.
static std::string meeting_file(const char* variable) {
    const char* log = std::getenv(variable);
    return log && *log ? std::string(log) + ".meet" : std::string();
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
    if (current->machine->contexts_meet > 0)
        meet(meeting_file("PROVISION_FAKE_CUDA_CONTEXT_LOG"), current->machine->contexts_meet);
    if (current->machine->context_delay_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(current->machine->context_delay_ms));
    record_context(begin, monotonic_ns(), current->machine->fixture.gpus[gpu].uuid);
    static int primary_context;  // any non-null handle will do
    *context = &primary_context;
    return cuda::SUCCESS;
}

// Memory shared between processes (cuMem and legacy IPC), as far as a test
// can see it: handles are numbers, addresses are made up, and an export is a
// real descriptor (a memfd named after the fake), so that sending it to the
// peer's process over a UNIX socket is real and the import can tell a
// descriptor that did not arrive.  Opening a peer's memory sleeps
// handle_open_delay_ms and appends "PID BEGIN_NS END_NS UUID" to
// $PROVISION_FAKE_CUDA_OPEN_LOG.  Failures come from [faults] failing_calls
// for the process's device 0 (each worker sees its GPU alone), or the
// device the allocation names.

namespace {

struct FakeLocation {
    int type;
    int id;
};
struct FakeProp {  // CUmemAllocationProp
    int type;
    int handle_types;
    FakeLocation location;
    void* win32;
    unsigned char flags[8];
};
struct FakeAccess {
    FakeLocation location;
    int flags;
};

constexpr int kFabric = 8;  // CU_MEM_HANDLE_TYPE_FABRIC
constexpr std::size_t kFabricHandleBytes = 64;
constexpr char kFabricMark[] = "fake-fabric";

std::atomic<std::uint64_t> next_handle{1};
std::atomic<std::uint64_t> next_address{0x7f0000000000ull};

cuda::Result failure_of(const char* function, int device = 0) {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    return lookup(device, function, current, gpu);
}

std::string own_uuid() {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (lookup(0, "", current, gpu) != cuda::SUCCESS) return "?";
    return current->machine->fixture.gpus[gpu].uuid;
}

void open_peer_memory() {
    std::shared_ptr<const Enumeration> current;
    std::size_t gpu = 0;
    if (lookup(0, "", current, gpu) != cuda::SUCCESS) return;
    const std::int64_t begin = monotonic_ns();
    if (current->machine->openings_meet > 0)
        meet(meeting_file("PROVISION_FAKE_CUDA_OPEN_LOG"), current->machine->openings_meet);
    if (current->machine->handle_open_delay_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(current->machine->handle_open_delay_ms));
    const char* log = std::getenv("PROVISION_FAKE_CUDA_OPEN_LOG");
    if (!log || !*log) return;
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string line = std::to_string(getpid()) + " " + std::to_string(begin) + " " +
                             std::to_string(monotonic_ns()) + " " + own_uuid() + "\n";
    [[maybe_unused]] const ssize_t written = write(fd, line.data(), line.size());
    close(fd);
}

}  // namespace

FAKE_EXPORT cuda::Result cuMemGetAllocationGranularity(std::size_t* granularity, const FakeProp* prop, int) {
    if (!granularity || !prop) return cuda::ERROR_INVALID_VALUE;
    *granularity = std::size_t{2} << 20;
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuMemCreate(std::uint64_t* handle, std::size_t size, const FakeProp* prop, unsigned long long) {
    if (!handle || !prop || size == 0) return cuda::ERROR_INVALID_VALUE;
    const bool host_numa = prop->location.type == 3;
    if (const auto code = failure_of(host_numa ? "cuMemCreate.host_numa" : "cuMemCreate", host_numa ? 0 : prop->location.id))
        return code;
    if (prop->handle_types == kFabric)
        if (const auto code = failure_of("cuMemCreate.fabric", prop->location.id)) return code;
    *handle = next_handle++;
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuMemRelease(std::uint64_t) { return cuda::SUCCESS; }

FAKE_EXPORT cuda::Result cuMemAddressReserve(std::uint64_t* address, std::size_t size, std::size_t, std::uint64_t,
                                             unsigned long long) {
    if (!address) return cuda::ERROR_INVALID_VALUE;
    if (const auto code = failure_of("cuMemAddressReserve")) return code;
    *address = next_address.fetch_add((size + 0xFFFFF) & ~std::uint64_t{0xFFFFF});
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuMemAddressFree(std::uint64_t, std::size_t) { return cuda::SUCCESS; }

FAKE_EXPORT cuda::Result cuMemMap(std::uint64_t, std::size_t, std::size_t, std::uint64_t, unsigned long long) {
    return failure_of("cuMemMap");
}

FAKE_EXPORT cuda::Result cuMemUnmap(std::uint64_t, std::size_t) { return cuda::SUCCESS; }

FAKE_EXPORT cuda::Result cuMemSetAccess(std::uint64_t, std::size_t, const FakeAccess* access, std::size_t count) {
    if (!access || count == 0) return cuda::ERROR_INVALID_VALUE;
    return failure_of("cuMemSetAccess");
}

FAKE_EXPORT cuda::Result cuMemExportToShareableHandle(void* shareable, std::uint64_t handle, int type,
                                                      unsigned long long) {
    if (!shareable || handle == 0 || (type != 1 && type != kFabric)) return cuda::ERROR_INVALID_VALUE;
    if (const auto code = failure_of("cuMemExportToShareableHandle")) return code;
    if (type == kFabric) {  // CUmemFabricHandle: 64 bytes any process of the clique imports
        if (const auto code = failure_of("cuMemExportToShareableHandle.fabric")) return code;
        unsigned char* bytes = static_cast<unsigned char*>(shareable);
        std::memset(bytes, 0, kFabricHandleBytes);
        std::memcpy(bytes, kFabricMark, sizeof kFabricMark - 1);
        std::memcpy(bytes + 16, &handle, sizeof handle);
        // The exporting process: another process's import needs it alive,
        // as IMEX needs the exporter's allocation (one node's worker
        // exports, another node's imports: the proof across nodes).
        const std::int64_t exporter = getpid();
        std::memcpy(bytes + 24, &exporter, sizeof exporter);
        return cuda::SUCCESS;
    }
    const int fd = memfd_create("fake-cumem", MFD_CLOEXEC);
    if (fd < 0) return cuda::ERROR_OPERATING_SYSTEM;
    *static_cast<int*>(shareable) = fd;
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuMemImportFromShareableHandle(std::uint64_t* handle, void* os_handle, int type) {
    if (handle && os_handle && type == kFabric) {
        if (std::memcmp(os_handle, kFabricMark, sizeof kFabricMark - 1) != 0) return static_cast<cuda::Result>(400);  // not one an export made
        std::int64_t exporter = 0;
        std::memcpy(&exporter, static_cast<const unsigned char*>(os_handle) + 24, sizeof exporter);
        if (exporter <= 0 || (exporter != getpid() && kill(static_cast<pid_t>(exporter), 0) != 0 && errno == ESRCH))
            return static_cast<cuda::Result>(400);  // the exporter and its allocation are gone
        if (const auto code = failure_of("cuMemImportFromShareableHandle.fabric")) return code;
        *handle = next_handle++;
        return cuda::SUCCESS;
    }
    if (!handle || type != 1) return cuda::ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
    char target[64] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    if (readlink(link.c_str(), target, sizeof target - 1) < 0 || std::strstr(target, "fake-cumem") == nullptr)
        return cuda::ERROR_INVALID_VALUE;  // not a descriptor an export made
    open_peer_memory();
    if (const auto code = failure_of("cuMemImportFromShareableHandle")) return code;
    *handle = next_handle++;
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuIpcGetMemHandle(void* handle, std::uint64_t) {
    if (!handle) return cuda::ERROR_INVALID_VALUE;
    return failure_of("cuIpcGetMemHandle");
}

FAKE_EXPORT cuda::Result cuIpcOpenMemHandle_v2(std::uint64_t* address, const void*, unsigned) {
    if (!address) return cuda::ERROR_INVALID_VALUE;
    open_peer_memory();
    if (const auto code = failure_of("cuIpcOpenMemHandle_v2")) return code;
    *address = next_address.fetch_add(std::uint64_t{1} << 26);
    return cuda::SUCCESS;
}

FAKE_EXPORT cuda::Result cuIpcCloseMemHandle(std::uint64_t) { return cuda::SUCCESS; }
