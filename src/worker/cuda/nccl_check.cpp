#include "worker/cuda/nccl_check.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kernels/buffer_kernels.h"
#include "kernels/cuda_support.h"

namespace provision::links {
namespace {

using kernels::detail::check_cuda;
using kernels::detail::CudaFailure;
namespace detail = kernels::detail;

// NCCL's ABI (nccl.h): the id is 128 bytes; ncclFloat32 is 7, ncclSum 0.
struct UniqueId {
    char bytes[128];
};
using Comm = void*;
constexpr int kFloat32 = 7;
constexpr int kSum = 0;

struct Nccl {
    void* library = nullptr;
    int (*get_unique_id)(UniqueId*) = nullptr;
    int (*comm_init_rank)(Comm*, int, UniqueId, int) = nullptr;
    int (*all_reduce)(const void*, void*, std::size_t, int, int, Comm, cudaStream_t) = nullptr;
    int (*comm_destroy)(Comm) = nullptr;
    const char* (*error_string)(int) = nullptr;

    std::string error;

    explicit Nccl(const std::string& path) {
        library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            const char* why = dlerror();
            error = fmt::format("cannot load {}: {}", path, why ? why : "unknown");
            return;
        }
        get_unique_id = reinterpret_cast<decltype(get_unique_id)>(dlsym(library, "ncclGetUniqueId"));
        comm_init_rank = reinterpret_cast<decltype(comm_init_rank)>(dlsym(library, "ncclCommInitRank"));
        all_reduce = reinterpret_cast<decltype(all_reduce)>(dlsym(library, "ncclAllReduce"));
        comm_destroy = reinterpret_cast<decltype(comm_destroy)>(dlsym(library, "ncclCommDestroy"));
        error_string = reinterpret_cast<decltype(error_string)>(dlsym(library, "ncclGetErrorString"));
        if (!get_unique_id || !comm_init_rank || !all_reduce || !comm_destroy)
            error = fmt::format("{} lacks NCCL's entry points", path);
    }

    std::string describe(const char* call, int code) const {
        return fmt::format("{}: NCCL error {}{}", call, code,
                           error_string ? fmt::format(" ({})", error_string(code)) : std::string());
    }
};

std::string hex_of(const void* data, std::size_t size) {
    std::string text;
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) text += fmt::format("{:02x}", bytes[i]);
    return text;
}

bool bytes_of(const std::string& hex, void* data, std::size_t size) {
    if (hex.size() != 2 * size) return false;
    auto* bytes = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        unsigned value = 0;
        if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return false;
        bytes[i] = static_cast<unsigned char>(value);
    }
    return true;
}

}  // namespace

NcclUniqueId make_nccl_unique_id(const std::string& library) {
    NcclUniqueId result;
    const Nccl nccl(library);  // kept loaded: the same process joins the communicator later
    if (!nccl.error.empty()) {
        result.detail = nccl.error;
        return result;
    }
    UniqueId id{};
    if (const int code = nccl.get_unique_id(&id); code != 0) {
        result.detail = nccl.describe("ncclGetUniqueId", code);
        return result;
    }
    result.id = hex_of(&id, sizeof id);
    result.ok = true;
    return result;
}

NcclAllReduce run_nccl_all_reduce(int cuda_device, const std::string& library, int ranks, int rank,
                                  const std::string& id_hex, std::size_t bytes, int repeats) {
    NcclAllReduce result;
    const Nccl nccl(library);
    if (!nccl.error.empty()) {
        result.detail = nccl.error;
        return result;
    }
    UniqueId id{};
    if (!bytes_of(id_hex, &id, sizeof id)) {
        result.detail = "the communicator's id is malformed";
        return result;
    }
    Comm comm = nullptr;
    try {
        check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
        const auto start = std::chrono::steady_clock::now();
        if (const int code = nccl.comm_init_rank(&comm, ranks, id, rank); code != 0) {
            result.detail = nccl.describe("ncclCommInitRank", code);
            return result;
        }
        result.init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        const std::size_t count = bytes / sizeof(float);
        detail::Stream stream;
        detail::DeviceBuffer data(count * sizeof(float));
        detail::DeviceBuffer wrong(sizeof(unsigned long long));
        const auto reduce = [&] {
            check_cuda(kernels::launch_fill_value(data.as<float>(), count, static_cast<float>(rank + 1), stream.get()),
                       "the fill kernel");
            if (const int code = nccl.all_reduce(data.get(), data.get(), count, kFloat32, kSum, comm, stream.get());
                code != 0)
                throw std::runtime_error(nccl.describe("ncclAllReduce", code));
        };
        reduce();  // untimed: the first call also finishes NCCL's set-up
        stream.synchronize("ncclAllReduce");
        std::vector<double> times;
        detail::EventTimer timer;
        for (int i = 0; i < std::max(repeats, 1); ++i) {
            check_cuda(kernels::launch_fill_value(data.as<float>(), count, static_cast<float>(rank + 1), stream.get()),
                       "the fill kernel");
            timer.start(stream.get());
            if (const int code = nccl.all_reduce(data.get(), data.get(), count, kFloat32, kSum, comm, stream.get());
                code != 0)
                throw std::runtime_error(nccl.describe("ncclAllReduce", code));
            timer.stop(stream.get());
            times.push_back(timer.elapsed_ms());
        }
        std::sort(times.begin(), times.end());
        result.ms = times[times.size() / 2];
        const float expected = static_cast<float>(ranks) * static_cast<float>(ranks + 1) / 2;
        check_cuda(cudaMemsetAsync(wrong.get(), 0, sizeof(unsigned long long), stream.get()), "cudaMemsetAsync");
        check_cuda(kernels::launch_count_wrong(data.as<float>(), count, expected, wrong.as<unsigned long long>(),
                                               stream.get()),
                   "the checking kernel");
        const auto found = wrong.download<unsigned long long>(stream.get());
        result.bus_gb_per_s = result.ms > 0 ? 2.0 * (ranks - 1) / ranks * static_cast<double>(bytes) / (result.ms * 1e-3) / 1e9 : 0;
        result.ok = found[0] == 0;
        result.detail = result.ok ? fmt::format("{} MiB of float32 over {} ranks, median of {}, every element {}",
                                                bytes >> 20, ranks, std::max(repeats, 1), expected)
                                  : fmt::format("{} of {} elements are not {}", found[0], count, expected);
    } catch (const CudaFailure& failure) {
        result.ok = false;
        result.detail = detail::describe_cuda_failure(failure, cuda_device);
    } catch (const std::runtime_error& error) {
        result.ok = false;
        result.detail = error.what();
    }
    if (comm) nccl.comm_destroy(comm);
    return result;
}

}  // namespace provision::links
