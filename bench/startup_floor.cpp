// The least a GPU-aware start-up must do, as one process: dlopen libcuda and
// libnvidia-ml, cuInit, create (retain) the primary context of every visible
// GPU, nvmlInit and ask each GPU's name and compute capability.  gpu-bench
// times this whole process as the floor provision's own start is held to.
// No CUDA headers: the few entry points are declared here, as provision's
// detection does, so the floor pays exactly the cost of the driver itself.
// Prints each phase's time, so a slow floor can be explained.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using nvmlReturn_t = int;
using nvmlDevice_t = void*;

template <typename Function>
Function symbol(void* library, const char* name) {
    void* address = dlsym(library, name);
    if (address == nullptr) {
        std::fprintf(stderr, "startup_floor: %s not found\n", name);
        std::exit(1);
    }
    return reinterpret_cast<Function>(address);
}

void* open_library(const char* name) {
    void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        std::fprintf(stderr, "startup_floor: %s\n", dlerror());
        std::exit(1);
    }
    return library;
}

void require(int status, const char* call) {
    if (status != 0) {
        std::fprintf(stderr, "startup_floor: %s returned %d\n", call, status);
        std::exit(1);
    }
}

// Milliseconds since the previous call.
double lap() {
    static auto last = std::chrono::steady_clock::now();
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last).count();
    last = now;
    return ms;
}

}  // namespace

int main() {
    lap();
    void* cuda = open_library("libcuda.so.1");
    auto cu_init = symbol<CUresult (*)(unsigned)>(cuda, "cuInit");
    auto cu_device_get_count = symbol<CUresult (*)(int*)>(cuda, "cuDeviceGetCount");
    auto cu_device_get = symbol<CUresult (*)(CUdevice*, int)>(cuda, "cuDeviceGet");
    auto cu_retain = symbol<CUresult (*)(CUcontext*, CUdevice)>(cuda, "cuDevicePrimaryCtxRetain");
    auto cu_set_current = symbol<CUresult (*)(CUcontext)>(cuda, "cuCtxSetCurrent");
    auto cu_synchronize = symbol<CUresult (*)()>(cuda, "cuCtxSynchronize");
    auto cu_release = symbol<CUresult (*)(CUdevice)>(cuda, "cuDevicePrimaryCtxRelease_v2");

    void* nvml = open_library("libnvidia-ml.so.1");
    auto nvml_init = symbol<nvmlReturn_t (*)()>(nvml, "nvmlInit_v2");
    auto nvml_count = symbol<nvmlReturn_t (*)(unsigned*)>(nvml, "nvmlDeviceGetCount_v2");
    auto nvml_handle = symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(nvml, "nvmlDeviceGetHandleByIndex_v2");
    auto nvml_name = symbol<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(nvml, "nvmlDeviceGetName");
    auto nvml_capability =
        symbol<nvmlReturn_t (*)(nvmlDevice_t, int*, int*)>(nvml, "nvmlDeviceGetCudaComputeCapability");
    auto nvml_shutdown = symbol<nvmlReturn_t (*)()>(nvml, "nvmlShutdown");

    std::printf("dlopen libcuda + libnvidia-ml: %.1f ms\n", lap());

    require(nvml_init(), "nvmlInit_v2");
    unsigned nvml_gpus = 0;
    require(nvml_count(&nvml_gpus), "nvmlDeviceGetCount_v2");
    for (unsigned i = 0; i < nvml_gpus; ++i) {
        nvmlDevice_t device = nullptr;
        char name[96] = {};
        int major = 0, minor = 0;
        require(nvml_handle(i, &device), "nvmlDeviceGetHandleByIndex_v2");
        require(nvml_name(device, name, sizeof name), "nvmlDeviceGetName");
        require(nvml_capability(device, &major, &minor), "nvmlDeviceGetCudaComputeCapability");
        std::printf("%u %s %d.%d\n", i, name, major, minor);
    }
    require(nvml_shutdown(), "nvmlShutdown");
    std::printf("NVML init, names, capabilities, shutdown: %.1f ms\n", lap());

    require(cu_init(0), "cuInit");
    std::printf("cuInit: %.1f ms\n", lap());
    int cuda_gpus = 0;
    require(cu_device_get_count(&cuda_gpus), "cuDeviceGetCount");
    for (int i = 0; i < cuda_gpus; ++i) {
        CUdevice device = 0;
        CUcontext context = nullptr;
        require(cu_device_get(&device, i), "cuDeviceGet");
        require(cu_retain(&context, device), "cuDevicePrimaryCtxRetain");
        // Making it current and synchronizing forces the context to exist.
        require(cu_set_current(context), "cuCtxSetCurrent");
        require(cu_synchronize(), "cuCtxSynchronize");
        require(cu_set_current(nullptr), "cuCtxSetCurrent");
        require(cu_release(device), "cuDevicePrimaryCtxRelease_v2");
        std::printf("GPU %d primary context retain, synchronize, release: %.1f ms\n", i, lap());
    }
    return 0;
}
