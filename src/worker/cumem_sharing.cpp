#include "worker/cumem_sharing.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace provision::cumem {
namespace {

constexpr Result kSuccess = 0;

// What the owner sends back with the descriptor.
struct Reply {
    std::uint64_t size = 0;
    std::int32_t code = 0;  // the export's CUresult; the descriptor comes only with 0
    char call[44] = {};
};

sockaddr_un abstract_address(const std::string& name, socklen_t& length) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::size_t size = std::min(name.size(), sizeof address.sun_path - 1);
    std::memcpy(address.sun_path + 1, name.data(), size);  // sun_path[0] = '\0': the abstract namespace
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + size);
    return address;
}

void set_receive_timeout(int socket, double seconds) {
    timeval limit{};
    limit.tv_sec = static_cast<time_t>(seconds);
    limit.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(limit.tv_sec)) * 1e6);
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

bool send_reply(int socket, const sockaddr* to, socklen_t to_length, const Reply& reply, int fd) {
    msghdr message{};
    iovec part{const_cast<Reply*>(&reply), sizeof reply};
    message.msg_name = const_cast<sockaddr*>(to);
    message.msg_namelen = to_length;
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
    }
    return sendmsg(socket, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof reply);
}

// The reply and the descriptor that came with it (-1 when none), or false.
bool receive_reply(int socket, Reply& reply, int& fd) {
    msghdr message{};
    iovec part{&reply, sizeof reply};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    fd = -1;
    if (recvmsg(socket, &message, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof reply)) return false;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header))
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS)
            std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
    return true;
}

bool fail(Failure& failure, const Driver& driver, const char* call, Result code) {
    failure.call = call;
    failure.code = code;
    failure.detail = describe(driver, call, code);
    return false;
}

bool missing(Failure& failure, const char* call) {
    failure.call = call;
    failure.code = -1;
    failure.detail = std::string(call) + ": not in this driver";
    return false;
}

// Calls `function` when the driver has it; false (with `failure`) when it
// has not or the call fails.
template <typename Function, typename... Args>
bool call(const Driver& driver, Failure& failure, Function function, const char* name, Args... args) {
    if (!function) return missing(failure, name);
    const Result code = function(args...);
    return code == kSuccess || fail(failure, driver, name, code);
}

AllocationProp device_memory(int device) {
    AllocationProp prop;
    prop.type = kAllocationPinned;
    prop.requested_handle_types = kHandlePosixFd;
    prop.location = {kLocationDevice, device};
    return prop;
}

bool grant_access(const Driver& driver, Failure& failure, DevicePointer address, std::size_t size, Location to) {
    const AccessDesc access{to, kAccessReadWrite};
    return call(driver, failure, driver.set_access, "cuMemSetAccess", address, size, &access, std::size_t{1});
}

std::atomic<unsigned> served_buffers{0};

}  // namespace

std::string describe(const Driver& driver, const char* call, Result code) {
    const char* name = nullptr;
    if (driver.error_name && driver.error_name(code, &name) != kSuccess) name = nullptr;
    return std::string(call) + ": CUDA error " + std::to_string(code) + (name ? std::string(" (") + name + ")" : "");
}

struct SharedBuffer::Server {
    std::atomic<bool> stop{false};
    std::thread thread;
};

std::unique_ptr<SharedBuffer> SharedBuffer::create(const Driver& driver, int device, std::size_t bytes,
                                                   Failure& failure) {
    std::unique_ptr<SharedBuffer> buffer(new SharedBuffer);
    buffer->driver_ = &driver;
    int cu_device = 0, vmm = 0, posix_fd = 0;
    if (!call(driver, failure, driver.device_get, "cuDeviceGet", &cu_device, device)) return nullptr;
    if (!call(driver, failure, driver.device_attribute, "cuDeviceGetAttribute", &vmm, kAttributeVmmSupported,
              cu_device))
        return nullptr;
    if (vmm == 0) {
        failure = {"cuMemCreate", -1, "the GPU does not support CUDA's virtual memory management (cuMem)"};
        return nullptr;
    }
    if (driver.device_attribute(&posix_fd, kAttributePosixFdSupported, cu_device) == kSuccess && posix_fd == 0) {
        failure = {"cuMemExportToShareableHandle", -1, "the GPU cannot export cuMem memory as a file descriptor"};
        return nullptr;
    }
    const AllocationProp prop = device_memory(cu_device);
    std::size_t granularity = 0;
    if (!call(driver, failure, driver.granularity, "cuMemGetAllocationGranularity", &granularity, &prop,
              kGranularityMinimum))
        return nullptr;
    buffer->size_ = granularity ? (bytes + granularity - 1) / granularity * granularity : bytes;
    if (!call(driver, failure, driver.create, "cuMemCreate", &buffer->handle_, buffer->size_, &prop, 0ull))
        return nullptr;
    if (!call(driver, failure, driver.address_reserve, "cuMemAddressReserve", &buffer->address_, buffer->size_,
              granularity, DevicePointer{0}, 0ull))
        return nullptr;
    if (!call(driver, failure, driver.map, "cuMemMap", buffer->address_, buffer->size_, std::size_t{0},
              buffer->handle_, 0ull)) {
        driver.address_free(buffer->address_, buffer->size_);
        buffer->address_ = 0;
        return nullptr;
    }
    if (!grant_access(driver, failure, buffer->address_, buffer->size_, {kLocationDevice, cu_device})) return nullptr;
    // One export up front, so that a driver that cannot export says so here.
    int fd = -1;
    if (!call(driver, failure, driver.export_handle, "cuMemExportToShareableHandle", static_cast<void*>(&fd),
              buffer->handle_, kHandlePosixFd, 0ull))
        return nullptr;
    close(fd);

    buffer->socket_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    buffer->socket_name_ = "provision-cumem-" + std::to_string(getpid()) + "-" + std::to_string(device) + "-" +
                           std::to_string(served_buffers++);
    socklen_t length = 0;
    const sockaddr_un address = abstract_address(buffer->socket_name_, length);
    if (buffer->socket_ < 0 || bind(buffer->socket_, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
        failure = {"bind", -1, std::string("cannot open the socket the memory is served on: ") + std::strerror(errno)};
        return nullptr;
    }
    set_receive_timeout(buffer->socket_, 0.1);  // so that the server sees it must stop
    buffer->server_ = std::make_unique<Server>();
    buffer->server_->thread = std::thread([raw = buffer.get()] { raw->serve(); });
    return buffer;
}

void SharedBuffer::serve() {
    while (!server_->stop) {
        char request = 0;
        sockaddr_un from{};
        socklen_t from_length = sizeof from;
        if (recvfrom(socket_, &request, 1, 0, reinterpret_cast<sockaddr*>(&from), &from_length) != 1) continue;
        Reply reply;
        reply.size = size_;
        int fd = -1;
        reply.code = driver_->export_handle(static_cast<void*>(&fd), handle_, kHandlePosixFd, 0);
        std::strncpy(reply.call, "cuMemExportToShareableHandle", sizeof reply.call - 1);
        send_reply(socket_, reinterpret_cast<const sockaddr*>(&from), from_length, reply, reply.code == 0 ? fd : -1);
        if (fd >= 0) close(fd);
    }
}

SharedBuffer::~SharedBuffer() {
    if (server_) {
        server_->stop = true;
        shutdown(socket_, SHUT_RDWR);
        server_->thread.join();
    }
    if (socket_ >= 0) close(socket_);
    if (address_) {
        if (driver_->unmap) driver_->unmap(address_, size_);
        if (driver_->address_free) driver_->address_free(address_, size_);
    }
    if (handle_ && driver_->release) driver_->release(handle_);
}

namespace {

// A peer's memory imported into this process.  Kept until the process ends
// (the import keeps the memory allocated after its exporter releases it;
// a worker's process ends soon after its GPUs are done).
struct ImportedAllocation {
    Handle handle = 0;
    std::size_t size = 0;
};

// One peer buffer's import, made by the first of this process's GPUs that
// asks for it; the others wait for it rather than import it again.  A
// failed import is not kept: the next GPU tries again.
struct ImportSlot {
    std::mutex mutex;
    std::optional<ImportedAllocation> made;
};

std::shared_ptr<ImportSlot> import_slot(const std::string& socket_name) {
    static std::mutex mutex;
    // Never destroyed: the driver may be gone when static objects are, and
    // the process's end releases the imports anyway.
    static auto* slots = new std::map<std::string, std::shared_ptr<ImportSlot>>;
    std::lock_guard lock(mutex);
    auto& slot = (*slots)[socket_name];
    if (!slot) slot = std::make_shared<ImportSlot>();
    return slot;
}

// Asks the socket `socket_name` for the memory's descriptor (waiting at
// most `timeout_s`) and imports it.
std::optional<ImportedAllocation> fetch_and_import(const Driver& driver, const std::string& socket_name,
                                                   double timeout_s, Failure& failure) {
    // Ask the owner for a descriptor, from a socket of our own (an
    // autobound abstract name) that it can answer.
    const int socket = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un own{};
    own.sun_family = AF_UNIX;
    if (socket < 0 || bind(socket, reinterpret_cast<const sockaddr*>(&own), sizeof(sa_family_t)) != 0) {
        failure = {"socket", -1, std::string("cannot open a socket to ask for the memory: ") + std::strerror(errno)};
        if (socket >= 0) close(socket);
        return std::nullopt;
    }
    set_receive_timeout(socket, timeout_s);
    socklen_t length = 0;
    const sockaddr_un owner = abstract_address(socket_name, length);
    const char request = 1;
    Reply reply;
    int fd = -1;
    const bool asked = sendto(socket, &request, 1, MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&owner), length) == 1;
    const int ask_error = errno;
    const bool answered = asked && receive_reply(socket, reply, fd);
    close(socket);
    if (!asked || !answered) {
        failure = {"SCM_RIGHTS", -1,
                   std::string("the descriptor of the peer's memory did not come over its UNIX socket (@") +
                       socket_name + "): " + std::strerror(asked ? errno : ask_error)};
        return std::nullopt;
    }
    if (reply.code != 0) {
        reply.call[sizeof reply.call - 1] = '\0';
        fail(failure, driver, reply.call, reply.code);
        failure.detail = "the peer could not export its memory: " + failure.detail;
        return std::nullopt;
    }
    if (fd < 0) {
        failure = {"SCM_RIGHTS", -1, "the peer's answer came without a descriptor"};
        return std::nullopt;
    }
    ImportedAllocation imported;
    imported.size = reply.size;
    const bool ok = call(driver, failure, driver.import_handle, "cuMemImportFromShareableHandle", &imported.handle,
                         reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)), kHandlePosixFd);
    close(fd);
    if (!ok) return std::nullopt;
    return imported;
}

}  // namespace

std::unique_ptr<ImportedBuffer> ImportedBuffer::open(const Driver& driver, int device, const std::string& socket_name,
                                                     double timeout_s, Failure& failure) {
    ImportedAllocation allocation;
    bool reused = false;
    {
        const auto slot = import_slot(socket_name);
        std::lock_guard lock(slot->mutex);
        if (slot->made) {
            reused = true;
        } else {
            slot->made = fetch_and_import(driver, socket_name, timeout_s, failure);
            if (!slot->made) return nullptr;
        }
        allocation = *slot->made;
    }
    auto buffer = map_own(driver, device, allocation.handle, allocation.size, failure);
    if (buffer) buffer->reused_ = reused;
    return buffer;
}

std::unique_ptr<ImportedBuffer> ImportedBuffer::map_own(const Driver& driver, int device, Handle handle,
                                                        std::size_t size, Failure& failure) {
    std::unique_ptr<ImportedBuffer> buffer(new ImportedBuffer);
    buffer->driver_ = &driver;
    int cu_device = 0;
    if (!call(driver, failure, driver.device_get, "cuDeviceGet", &cu_device, device)) return nullptr;
    buffer->size_ = size;
    if (!call(driver, failure, driver.address_reserve, "cuMemAddressReserve", &buffer->address_, buffer->size_,
              std::size_t{0}, DevicePointer{0}, 0ull))
        return nullptr;
    if (!call(driver, failure, driver.map, "cuMemMap", buffer->address_, buffer->size_, std::size_t{0}, handle, 0ull)) {
        driver.address_free(buffer->address_, buffer->size_);
        buffer->address_ = 0;
        return nullptr;
    }
    if (!grant_access(driver, failure, buffer->address_, buffer->size_, {kLocationDevice, cu_device})) return nullptr;
    return buffer;
}

ImportedBuffer::~ImportedBuffer() {
    if (address_) {
        if (driver_->unmap) driver_->unmap(address_, size_);
        if (driver_->address_free) driver_->address_free(address_, size_);
    }
}

HostNumaResult allocate_host_numa(const Driver& driver, int device,
                                  bool (*touch)(DevicePointer, std::size_t, std::string&)) {
    HostNumaResult result;
    Failure& failure = result.failure;
    int cu_device = 0;
    if (!call(driver, failure, driver.device_get, "cuDeviceGet", &cu_device, device)) return result;
    if (!call(driver, failure, driver.device_attribute, "cuDeviceGetAttribute (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID)",
              &result.numa_node, kAttributeHostNumaId, cu_device))
        return result;
    AllocationProp prop;
    prop.type = kAllocationPinned;
    prop.requested_handle_types = kHandlePosixFd;
    prop.location = {kLocationHostNuma, result.numa_node};
    if (!call(driver, failure, driver.granularity, "cuMemGetAllocationGranularity", &result.bytes, &prop,
              kGranularityMinimum))
        return result;
    Handle handle = 0;
    if (!call(driver, failure, driver.create, "cuMemCreate (host NUMA memory)", &handle, result.bytes, &prop, 0ull))
        return result;
    DevicePointer address = 0;
    bool ok = call(driver, failure, driver.address_reserve, "cuMemAddressReserve", &address, result.bytes,
                   result.bytes, DevicePointer{0}, 0ull);
    bool mapped = ok && call(driver, failure, driver.map, "cuMemMap", address, result.bytes, std::size_t{0}, handle, 0ull);
    ok = mapped && grant_access(driver, failure, address, result.bytes, {kLocationDevice, cu_device});
    std::string why;
    if (ok && touch && !touch(address, result.bytes, why)) {
        failure = {"touch", -1, "the GPU could not write the host memory: " + why};
        ok = false;
    }
    if (mapped && driver.unmap) driver.unmap(address, result.bytes);
    if (address && driver.address_free) driver.address_free(address, result.bytes);
    if (driver.release) driver.release(handle);
    result.ok = ok;
    return result;
}

namespace {

// An address range of `bytes` with `handle` mapped and `device` granted
// access; undone by its destructor, whatever step failed.
class Mapping {
public:
    Mapping(const Driver& driver, std::size_t bytes) : driver_(driver), bytes_(bytes) {}
    ~Mapping() {
        if (mapped_ && driver_.unmap) driver_.unmap(address_, bytes_);
        if (address_ && driver_.address_free) driver_.address_free(address_, bytes_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;

    bool map(Failure& failure, Handle handle, int device, const char* what) {
        if (!call(driver_, failure, driver_.address_reserve, "cuMemAddressReserve", &address_, bytes_, bytes_,
                  DevicePointer{0}, 0ull))
            return false;
        mapped_ = call(driver_, failure, driver_.map, what, address_, bytes_, std::size_t{0}, handle, 0ull);
        return mapped_ && grant_access(driver_, failure, address_, bytes_, {kLocationDevice, device});
    }
    DevicePointer address() const { return address_; }

private:
    const Driver& driver_;
    std::size_t bytes_;
    DevicePointer address_ = 0;
    bool mapped_ = false;
};

// A handle released at the end, whichever step failed.
struct Held {
    const Driver& driver;
    Handle handle = 0;
    ~Held() {
        if (handle && driver.release) driver.release(handle);
    }
};

}  // namespace

FabricHandleResult check_fabric_handle(const Driver& driver, int device,
                                       bool (*write_and_read)(DevicePointer, DevicePointer, std::size_t,
                                                              std::string&)) {
    FabricHandleResult result;
    Failure& failure = result.failure;
    int cu_device = 0;
    if (!call(driver, failure, driver.device_get, "cuDeviceGet", &cu_device, device)) return result;
    int supported = 0;
    if (!call(driver, failure, driver.device_attribute,
              "cuDeviceGetAttribute (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)", &supported,
              kAttributeFabricSupported, cu_device))
        return result;
    if (!supported) {
        result.supported = false;
        failure = {"cuDeviceGetAttribute", 0, "the device has no fabric handles (HANDLE_TYPE_FABRIC_SUPPORTED 0)"};
        return result;
    }
    AllocationProp prop;
    prop.type = kAllocationPinned;
    prop.requested_handle_types = kHandleFabric;
    prop.location = {kLocationDevice, cu_device};
    if (!call(driver, failure, driver.granularity, "cuMemGetAllocationGranularity", &result.bytes, &prop,
              kGranularityMinimum))
        return result;
    Held created{driver};
    if (!call(driver, failure, driver.create, "cuMemCreate (CU_MEM_HANDLE_TYPE_FABRIC)", &created.handle, result.bytes,
              &prop, 0ull))
        return result;
    Mapping own(driver, result.bytes);
    if (!own.map(failure, created.handle, cu_device, "cuMemMap")) return result;
    unsigned char fabric_handle[kFabricHandleBytes] = {};
    if (!call(driver, failure, driver.export_handle, "cuMemExportToShareableHandle (CU_MEM_HANDLE_TYPE_FABRIC)",
              static_cast<void*>(fabric_handle), created.handle, kHandleFabric, 0ull))
        return result;
    Held imported{driver};
    if (!call(driver, failure, driver.import_handle, "cuMemImportFromShareableHandle (CU_MEM_HANDLE_TYPE_FABRIC)",
              &imported.handle, static_cast<void*>(fabric_handle), kHandleFabric))
        return result;
    Mapping through(driver, result.bytes);
    if (!through.map(failure, imported.handle, cu_device, "cuMemMap (the imported fabric handle)")) return result;
    std::string why;
    if (write_and_read && !write_and_read(through.address(), own.address(), result.bytes, why)) {
        failure = {"pattern", -1, "a pattern written through the imported mapping did not read back: " + why};
        return result;
    }
    result.ok = true;
    return result;
}

}  // namespace provision::cumem
