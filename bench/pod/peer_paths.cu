// What one pair's copy check costs, phase by phase, on each path NCCL may
// take between two processes, each seeing one GPU (as provision's workers
// and NCCL's ranks do):
//   legacy     cudaIpcGetMemHandle / cudaIpcOpenMemHandle (NCCL_CUMEM_ENABLE=0)
//   cumem      cuMemCreate with a POSIX file descriptor, the descriptor sent
//              over a UNIX socket (SCM_RIGHTS), imported, mapped, access set
//              (NCCL >= 2.19 by default: "P2P/CUMEM")
//   cumem-one-process  the same between two threads of one process that sees
//              both GPUs: does an import of one's own export work, and cost the same?
//   host-numa  one granule of host memory from cuMemCreate at the GPU's host
//              NUMA node, mapped and touched by the GPU (NCCL >= 2.24's host buffers)
// Both ways of a pair run at once; each phase's median over --rounds is
// printed, per side, with the copy's GB/s.  Every word of each copy is
// checked.  Usage: peer_paths [--path P|all] [--mib 64] [--rounds 5]
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Failure {
    std::string what;
};

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw Failure{std::string(what) + ": " + cudaGetErrorName(status)};
}
void check(CUresult status, const char* what) {
    if (status != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(status, &name);
        throw Failure{std::string(what) + ": " + (name ? name : "?") + " (" + std::to_string(status) + ")"};
    }
}

__device__ std::uint64_t pattern(int source, std::uint64_t i) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(source + 1) * 0xD1B54A32D192ED03ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    return (x ^ (x >> 31)) | 1;
}
__global__ void fill(std::uint64_t* words, std::uint64_t n, int source) {
    for (std::uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) words[i] = pattern(source, i);
}
__global__ void verify(const std::uint64_t* words, std::uint64_t n, int source, unsigned long long* wrong) {
    for (std::uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull)
        if (words[i] != pattern(source, i)) atomicAdd(wrong, 1ull);
}

// Phase times of one side, in ms, keyed by phase.
using Phases = std::map<std::string, std::vector<double>>;

class Lap {
public:
    double next() {
        const auto now = Clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
        return ms;
    }

private:
    Clock::time_point last_ = Clock::now();
};

void send_bytes(int sock, const void* data, std::size_t size, int fd = -1) {
    msghdr message{};
    iovec part{const_cast<void*>(data), size};
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
    if (sendmsg(sock, &message, 0) != static_cast<ssize_t>(size)) throw Failure{"sendmsg failed"};
}

// Returns the descriptor that came with the bytes, or -1.
int receive_bytes(int sock, void* data, std::size_t size) {
    msghdr message{};
    iovec part{data, size};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    if (recvmsg(sock, &message, MSG_WAITALL) != static_cast<ssize_t>(size)) throw Failure{"recvmsg failed"};
    int fd = -1;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header))
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS)
            std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
    return fd;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// Copies `bytes` from `peer` into `local` once untimed, then `repeats`
// times timed; returns the median ms.
double timed_copies(void* local, const void* peer, std::size_t bytes, cudaStream_t stream, int repeats) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaMemcpyAsync(local, peer, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        check(cudaEventRecord(start, stream), "record");
        check(cudaMemcpyAsync(local, peer, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
        check(cudaEventRecord(stop, stream), "record");
        check(cudaEventSynchronize(stop), "sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
        times.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return median(times);
}

unsigned long long wrong_words(const void* local, std::size_t bytes, int source, cudaStream_t stream) {
    unsigned long long* wrong = nullptr;
    check(cudaMalloc(&wrong, sizeof *wrong), "cudaMalloc");
    check(cudaMemsetAsync(wrong, 0, sizeof *wrong, stream), "memset");
    verify<<<1024, 256, 0, stream>>>(static_cast<const std::uint64_t*>(local), bytes / 8, source, wrong);
    check(cudaGetLastError(), "verify");
    unsigned long long found = 0;
    check(cudaMemcpyAsync(&found, wrong, sizeof found, cudaMemcpyDeviceToHost, stream), "download");
    check(cudaStreamSynchronize(stream), "sync");
    cudaFree(wrong);
    return found;
}

// A cuMem allocation of `bytes` on `device`, exportable as a descriptor,
// mapped and readable there.
struct CuMemBuffer {
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr address = 0;
    std::size_t size = 0;
};

CUmemAllocationProp device_props(int device) {
    CUmemAllocationProp props{};
    props.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    props.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return props;
}

std::size_t rounded(std::size_t bytes, const CUmemAllocationProp& props) {
    std::size_t granularity = 0;
    check(cuMemGetAllocationGranularity(&granularity, &props, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "granularity");
    return (bytes + granularity - 1) / granularity * granularity;
}

void map_for(CuMemBuffer& buffer, int device) {
    check(cuMemAddressReserve(&buffer.address, buffer.size, 0, 0, 0), "cuMemAddressReserve");
    check(cuMemMap(buffer.address, buffer.size, 0, buffer.handle, 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(cuMemSetAccess(buffer.address, buffer.size, &access, 1), "cuMemSetAccess");
}

void unmap(CuMemBuffer& buffer) {
    if (buffer.address) {
        cuMemUnmap(buffer.address, buffer.size);
        cuMemAddressFree(buffer.address, buffer.size);
    }
    if (buffer.handle) cuMemRelease(buffer.handle);
    buffer = {};
}

// One side of a pair: `device` in this process, `source` its id in the
// pattern, `sock` the line to the other side.
void one_round(const std::string& path, int device, int source, int peer_source, int sock, std::size_t bytes,
               Phases& phases) {
    Lap lap;
    cudaStream_t stream;
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    void* local = nullptr;
    check(cudaMalloc(&local, bytes), "cudaMalloc");
    check(cudaMemsetAsync(local, 0xEE, bytes, stream), "poison");
    check(cudaStreamSynchronize(stream), "sync");
    lap.next();
    if (path == "legacy") {
        void* mine = nullptr;
        check(cudaMalloc(&mine, bytes), "cudaMalloc");
        fill<<<1024, 256, 0, stream>>>(static_cast<std::uint64_t*>(mine), bytes / 8, source);
        check(cudaStreamSynchronize(stream), "fill");
        phases["alloc_fill"].push_back(lap.next());
        cudaIpcMemHandle_t handle;
        check(cudaIpcGetMemHandle(&handle, mine), "cudaIpcGetMemHandle");
        phases["export"].push_back(lap.next());
        send_bytes(sock, &handle, sizeof handle);
        cudaIpcMemHandle_t theirs;
        receive_bytes(sock, &theirs, sizeof theirs);
        phases["exchange"].push_back(lap.next());
        void* peer = nullptr;
        check(cudaIpcOpenMemHandle(&peer, theirs, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
        phases["open_map"].push_back(lap.next());
        const double ms = timed_copies(local, peer, bytes, stream, 3);
        phases["copies"].push_back(lap.next());
        phases["gb_per_s"].push_back(bytes / (ms * 1e-3) / 1e9);
        const auto wrong = wrong_words(local, bytes, peer_source, stream);
        phases["verify"].push_back(lap.next());
        if (wrong) throw Failure{std::to_string(wrong) + " wrong words"};
        check(cudaIpcCloseMemHandle(peer), "cudaIpcCloseMemHandle");
        phases["close"].push_back(lap.next());
        char done = 1;
        send_bytes(sock, &done, 1);
        receive_bytes(sock, &done, 1);  // the other side has closed its mapping of ours
        cudaFree(mine);
    } else {
        CuMemBuffer mine;
        const CUmemAllocationProp props = device_props(device);
        mine.size = rounded(bytes, props);
        check(cuMemCreate(&mine.handle, mine.size, &props, 0), "cuMemCreate");
        map_for(mine, device);
        fill<<<1024, 256, 0, stream>>>(reinterpret_cast<std::uint64_t*>(mine.address), bytes / 8, source);
        check(cudaStreamSynchronize(stream), "fill");
        phases["alloc_fill"].push_back(lap.next());
        int fd = -1;
        check(cuMemExportToShareableHandle(&fd, mine.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
              "cuMemExportToShareableHandle");
        phases["export"].push_back(lap.next());
        const std::uint64_t size = mine.size;
        send_bytes(sock, &size, sizeof size, fd);
        std::uint64_t their_size = 0;
        const int their_fd = receive_bytes(sock, &their_size, sizeof their_size);
        close(fd);
        if (their_fd < 0) throw Failure{"no descriptor came"};
        phases["exchange"].push_back(lap.next());
        CuMemBuffer peer;
        peer.size = their_size;
        check(cuMemImportFromShareableHandle(&peer.handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(their_fd)),
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
              "cuMemImportFromShareableHandle");
        close(their_fd);
        phases["import"].push_back(lap.next());
        map_for(peer, device);
        phases["open_map"].push_back(lap.next());
        const double ms = timed_copies(local, reinterpret_cast<void*>(peer.address), bytes, stream, 3);
        phases["copies"].push_back(lap.next());
        phases["gb_per_s"].push_back(bytes / (ms * 1e-3) / 1e9);
        const auto wrong = wrong_words(local, bytes, peer_source, stream);
        phases["verify"].push_back(lap.next());
        if (wrong) throw Failure{std::to_string(wrong) + " wrong words"};
        unmap(peer);
        phases["close"].push_back(lap.next());
        char done = 1;
        send_bytes(sock, &done, 1);
        receive_bytes(sock, &done, 1);
        unmap(mine);
    }
    cudaFree(local);
    cudaStreamDestroy(stream);
}

void host_numa(int device, Phases& phases) {
    Lap lap;
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaFree(nullptr), "context");
    CUdevice cu_device;
    check(cuDeviceGet(&cu_device, device), "cuDeviceGet");
    int numa = -1;
    check(cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, cu_device), "HOST_NUMA_ID");
    phases["numa_id"].push_back(numa);
    lap.next();
    CUmemAllocationProp props{};
    props.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    props.location.id = numa;
    props.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CuMemBuffer buffer;
    buffer.size = rounded(1, props);
    check(cuMemCreate(&buffer.handle, buffer.size, &props, 0), "cuMemCreate (host NUMA)");
    phases["create"].push_back(lap.next());
    map_for(buffer, device);
    phases["map"].push_back(lap.next());
    check(cuMemsetD32(buffer.address, 0x5A5A5A5A, buffer.size / 4), "cuMemsetD32");
    check(cuCtxSynchronize(), "sync");
    phases["touch"].push_back(lap.next());
    phases["granule_kib"].push_back(buffer.size / 1024.0);
    unmap(buffer);
    phases["release"].push_back(lap.next());
}

void print(const std::string& path, const std::string& side, const Phases& phases, const std::string& error) {
    std::string line = "path=" + path + " side=" + side;
    for (const auto& [name, values] : phases) {
        char text[64];
        std::snprintf(text, sizeof text, " %s=%.3f", name.c_str(), median(values));
        line += text;
    }
    if (!error.empty()) line += " error=\"" + error + "\"";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

void side(const std::string& path, int device, int source, int sock, std::size_t bytes, int rounds) {
    Phases phases;
    std::string error;
    try {
        Lap lap;
        check(cudaSetDevice(device), "cudaSetDevice");
        check(cudaFree(nullptr), "context");
        phases["open_gpu"].push_back(lap.next());
        if (path == "host-numa") {
            for (int round = 0; round < rounds; ++round) host_numa(device, phases);
        } else {
            for (int round = 0; round < rounds; ++round) one_round(path, device, source, 1 - source, sock, bytes, phases);
        }
    } catch (const Failure& failure) {
        error = failure.what;
    }
    print(path, "gpu" + std::to_string(source), phases, error);
}

std::vector<std::string> visible_entries() {
    std::vector<std::string> entries;
    std::string text = std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "0,1";
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) entries.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return entries;
}

// Two processes, one GPU each.
void two_processes(const std::string& path, std::size_t bytes, int rounds) {
    const auto entries = visible_entries();
    if (entries.size() < 2) {
        std::printf("path=%s error=\"two GPUs needed\"\n", path.c_str());
        return;
    }
    int socks[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, socks) != 0) std::exit(1);
    std::fflush(stdout);
    pid_t pids[2];
    for (int i = 0; i < 2; ++i) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(socks[1 - i]);
            setenv("CUDA_VISIBLE_DEVICES", entries[i].c_str(), 1);
            side(path, 0, i, socks[i], bytes, rounds);
            std::_Exit(0);
        }
    }
    close(socks[0]);
    close(socks[1]);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
}

// One process that sees both GPUs, a thread each.
void one_process(std::size_t bytes, int rounds) {
    int socks[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, socks) != 0) std::exit(1);
    std::fflush(stdout);
    const pid_t pid = fork();  // CUDA starts in the child only
    if (pid == 0) {
        std::thread a([&] { side("cumem", 0, 0, socks[0], bytes, rounds); });
        std::thread b([&] { side("cumem", 1, 1, socks[1], bytes, rounds); });
        a.join();
        b.join();
        std::_Exit(0);
    }
    waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
    std::string path = "all";
    std::size_t mib = 64;
    int rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--path") path = argv[i + 1];
        else if (arg == "--mib") mib = std::strtoul(argv[i + 1], nullptr, 10);
        else if (arg == "--rounds") rounds = std::atoi(argv[i + 1]);
    }
    const std::size_t bytes = mib << 20;
    for (const std::string one : {"legacy", "cumem", "cumem-one-process", "host-numa"}) {
        if (path != "all" && path != one) continue;
        std::printf("== %s\n", one.c_str());
        std::fflush(stdout);
        if (one == "cumem-one-process") one_process(bytes, rounds);
        else two_processes(one, bytes, rounds);
    }
    return 0;
}
