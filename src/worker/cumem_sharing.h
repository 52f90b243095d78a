// GPU memory shared between processes the way NCCL >= 2.19 shares its peer
// buffers ("P2P/CUMEM" in its log), and host memory allocated the way NCCL
// >= 2.24 allocates its host buffers, against a table of CUDA driver entry
// points, so that the same code runs on the real driver (the link checks
// look the entry points up through the runtime) and on the test's fake
// libcuda.
//
// Sharing, as NCCL's P2P transport does it (src/transport/p2p.cc, its proxy's
// UNIX socket in src/misc/ipcsocket.cc): the owner creates the memory with
// cuMemCreate, asking for a POSIX file descriptor handle, maps it and grants
// its own GPU access; it serves the memory on an abstract-namespace UNIX
// datagram socket, answering each request with a descriptor exported for it
// (cuMemExportToShareableHandle) and sent with SCM_RIGHTS.  The importer asks
// for the descriptor, imports it (cuMemImportFromShareableHandle), reserves
// an address range, maps the memory there and grants its own GPU access.
//
// Host memory, as NCCL allocates it (src/include/alloc.h): cuMemCreate at
// CU_MEM_LOCATION_TYPE_HOST_NUMA on the NUMA node the driver names for the
// GPU (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID), mapped, and access granted to the
// GPU.  Needs working NUMA calls (get_mempolicy), which container seccomp
// profiles can refuse.
//
// Plain C++: the driver's types are declared here as cuda.h defines them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace provision::cumem {

using Result = int;                // CUresult
using Handle = std::uint64_t;      // CUmemGenericAllocationHandle
using DevicePointer = std::uint64_t;  // CUdeviceptr

struct Location {  // CUmemLocation
    int type = 0;
    int id = 0;
};
constexpr int kLocationDevice = 1;    // CU_MEM_LOCATION_TYPE_DEVICE
constexpr int kLocationHostNuma = 3;  // CU_MEM_LOCATION_TYPE_HOST_NUMA
constexpr int kHandlePosixFd = 1;     // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
constexpr int kHandleFabric = 8;      // CU_MEM_HANDLE_TYPE_FABRIC
constexpr std::size_t kFabricHandleBytes = 64;  // CUmemFabricHandle
constexpr int kAllocationPinned = 1;  // CU_MEM_ALLOCATION_TYPE_PINNED
constexpr int kAccessReadWrite = 3;   // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
constexpr int kGranularityMinimum = 0;  // CU_MEM_ALLOC_GRANULARITY_MINIMUM
constexpr int kAttributeVmmSupported = 102;   // CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
constexpr int kAttributePosixFdSupported = 103;  // CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED
constexpr int kAttributeHostNumaId = 134;     // CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID (CUDA 12.2)
constexpr int kAttributeFabricSupported = 128;  // CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED
constexpr Result kErrorPeerAccessUnsupported = 217;  // CUDA_ERROR_PEER_ACCESS_UNSUPPORTED

struct AllocationProp {  // CUmemAllocationProp
    int type = 0;
    int requested_handle_types = 0;
    Location location;
    void* win32_metadata = nullptr;
    struct {
        unsigned char compression_type = 0;
        unsigned char gpu_direct_rdma_capable = 0;
        unsigned short usage = 0;
        unsigned char reserved[4] = {};
    } flags;
};
static_assert(sizeof(AllocationProp) == 32, "CUmemAllocationProp is 32 bytes");

struct AccessDesc {  // CUmemAccessDesc
    Location location;
    int flags = 0;
};
static_assert(sizeof(AccessDesc) == 12, "CUmemAccessDesc is 12 bytes");

// The driver calls used here.  Any may be null (an old driver): the
// operation that needs it then fails naming it.
struct Driver {
    Result (*device_get)(int*, int) = nullptr;                          // cuDeviceGet
    Result (*device_attribute)(int*, int, int) = nullptr;               // cuDeviceGetAttribute
    Result (*granularity)(std::size_t*, const AllocationProp*, int) = nullptr;  // cuMemGetAllocationGranularity
    Result (*create)(Handle*, std::size_t, const AllocationProp*, unsigned long long) = nullptr;  // cuMemCreate
    Result (*release)(Handle) = nullptr;                                // cuMemRelease
    Result (*address_reserve)(DevicePointer*, std::size_t, std::size_t, DevicePointer, unsigned long long) = nullptr;
    Result (*address_free)(DevicePointer, std::size_t) = nullptr;      // cuMemAddressFree
    Result (*map)(DevicePointer, std::size_t, std::size_t, Handle, unsigned long long) = nullptr;  // cuMemMap
    Result (*unmap)(DevicePointer, std::size_t) = nullptr;             // cuMemUnmap
    Result (*set_access)(DevicePointer, std::size_t, const AccessDesc*, std::size_t) = nullptr;  // cuMemSetAccess
    Result (*export_handle)(void*, Handle, int, unsigned long long) = nullptr;  // cuMemExportToShareableHandle
    Result (*import_handle)(Handle*, void*, int) = nullptr;            // cuMemImportFromShareableHandle
    Result (*error_name)(Result, const char**) = nullptr;               // cuGetErrorName
};

// A driver call that failed: which, and its code.
struct Failure {
    std::string call;
    Result code = 0;
    std::string detail;  // "cuMemImportFromShareableHandle: CUDA error 101 (CUDA_ERROR_INVALID_DEVICE)", or why not called
};

// Memory this process made and serves to its peers.
class SharedBuffer {
public:
    ~SharedBuffer();
    SharedBuffer(const SharedBuffer&) = delete;
    SharedBuffer& operator=(const SharedBuffer&) = delete;

    DevicePointer address() const { return address_; }
    std::size_t size() const { return size_; }
    Handle handle() const { return handle_; }
    // The abstract socket name a peer asks for the memory at (no leading NUL).
    const std::string& socket_name() const { return socket_name_; }

    // `bytes` (rounded up to the granularity) on CUDA device `device`,
    // mapped here with access for it, served at once.  nullptr with
    // `failure` set when a step fails.
    static std::unique_ptr<SharedBuffer> create(const Driver& driver, int device, std::size_t bytes,
                                                Failure& failure);

private:
    SharedBuffer() = default;
    void serve();

    const Driver* driver_ = nullptr;
    Handle handle_ = 0;
    DevicePointer address_ = 0;
    std::size_t size_ = 0;
    int socket_ = -1;
    std::string socket_name_;
    struct Server;
    std::unique_ptr<Server> server_;
};

// A peer's memory mapped here for one GPU.  The memory is imported once per
// process and kept until the process ends; each GPU maps it with access of
// its own.  Between processes the import is a pair's fixed cost (6-11 ms on
// H100s, serialised in the driver: docs/PERFORMANCE.md), and NCCL's ranks
// import a peer's buffer once per process too, so a pod's later rounds of
// pairs map memory the first already imported.
class ImportedBuffer {
public:
    ~ImportedBuffer();
    ImportedBuffer(const ImportedBuffer&) = delete;
    ImportedBuffer& operator=(const ImportedBuffer&) = delete;

    DevicePointer address() const { return address_; }
    std::size_t size() const { return size_; }
    // Whether this process had imported the memory before (for another GPU).
    bool reused() const { return reused_; }

    // Asks the socket `socket_name` for the memory (waiting at most
    // `timeout_s`) and imports it, unless this process did so already, and
    // maps it with access for CUDA device `device`.  nullptr with `failure` set when a step fails; a refused
    // access between the two GPUs is kErrorPeerAccessUnsupported.
    static std::unique_ptr<ImportedBuffer> open(const Driver& driver, int device, const std::string& socket_name,
                                                double timeout_s, Failure& failure);
    // Memory this process made (`handle`, `size` bytes: a SharedBuffer of
    // another of its GPUs) mapped again with access for `device`, as NCCL
    // maps the memory of a rank in its own process: nothing to import.
    static std::unique_ptr<ImportedBuffer> map_own(const Driver& driver, int device, Handle handle, std::size_t size,
                                                   Failure& failure);

private:
    ImportedBuffer() = default;

    const Driver* driver_ = nullptr;
    DevicePointer address_ = 0;
    std::size_t size_ = 0;
    bool reused_ = false;
};


// One granule of host memory on the GPU's host NUMA node, as NCCL makes its
// host buffers: mapped, access granted to `device`, then released.  The
// caller touches it from the GPU between the two (`touch`, may be null).
struct HostNumaResult {
    bool ok = false;
    int numa_node = -1;      // CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID; -1: the system has no NUMA
    std::size_t bytes = 0;   // the granule
    Failure failure;         // when not ok
};
HostNumaResult allocate_host_numa(const Driver& driver, int device, bool (*touch)(DevicePointer, std::size_t, std::string&));

// "cuMemCreate: CUDA error 2 (CUDA_ERROR_OUT_OF_MEMORY)".
std::string describe(const Driver& driver, const char* call, Result code);

// NCCL's multi-node NVLink check (NVIDIA/nccl src/mnnvl.cc,
// ncclMnnvlCheck), and what NCCL's own check leaves out: device memory
// created with a fabric handle (CU_MEM_HANDLE_TYPE_FABRIC: brokered by
// IMEX, which needs a channel device in the container), exported, imported
// in this process, and mapped twice; `write_and_read` (null: not run) writes
// a pattern through the imported mapping from the GPU and checks it through
// the first.  `supported` is false where the device has no fabric handles
// (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED 0): NCCL takes no
// multi-node NVLink there and nothing more is tried.
struct FabricHandleResult {
    bool supported = true;
    bool ok = false;
    std::size_t bytes = 0;
    Failure failure;  // the call that failed, with CUDA's error
};
FabricHandleResult check_fabric_handle(const Driver& driver, int device,
                                       bool (*write_and_read)(DevicePointer through, DevicePointer back,
                                                              std::size_t bytes, std::string& why));

}  // namespace provision::cumem
