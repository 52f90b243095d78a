// What NVML costs a start: the least a tool reading the GPUs' names does
// (dlopen, nvmlInit_v2, each GPU's handle, name, compute capability, UUID
// and memory, nvmlShutdown), each phase timed, or (--probe) provision's own
// NVML probe as detection runs it (health, links, topology, fabric).
// bench/pod/pod-round times both as whole processes beside nvidia-smi.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "gpu/nvml_probe.h"

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kStart = Clock::now();

double since_start() { return std::chrono::duration<double, std::milli>(Clock::now() - kStart).count(); }

int minimal() {
    void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml) return 1;
    const double loaded = since_start();
    auto init = reinterpret_cast<int (*)()>(dlsym(nvml, "nvmlInit_v2"));
    auto count = reinterpret_cast<int (*)(unsigned*)>(dlsym(nvml, "nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
    auto name = reinterpret_cast<int (*)(void*, char*, unsigned)>(dlsym(nvml, "nvmlDeviceGetName"));
    auto capability = reinterpret_cast<int (*)(void*, int*, int*)>(dlsym(nvml, "nvmlDeviceGetCudaComputeCapability"));
    auto uuid = reinterpret_cast<int (*)(void*, char*, unsigned)>(dlsym(nvml, "nvmlDeviceGetUUID"));
    auto memory = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(nvml, "nvmlDeviceGetMemoryInfo"));
    auto shutdown = reinterpret_cast<int (*)()>(dlsym(nvml, "nvmlShutdown"));
    if (!init || !count || !handle || !name || !capability || !uuid || !memory || !shutdown || init() != 0) return 1;
    const double initialised = since_start();
    unsigned gpus = 0;
    count(&gpus);
    for (unsigned i = 0; i < gpus; ++i) {
        void* device = nullptr;
        char text[96];
        int major = 0, minor = 0;
        unsigned long long info[3];
        if (handle(i, &device) != 0) continue;
        name(device, text, sizeof text);
        capability(device, &major, &minor);
        uuid(device, text, sizeof text);
        memory(device, info);
    }
    const double read = since_start();
    shutdown();
    std::printf("dlopen=%.2f init=%.2f read=%.2f shutdown=%.2f\n", loaded, initialised - loaded, read - initialised,
                since_start() - read);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--probe") == 0) {
        const auto report = provision::probe_nvml("libnvidia-ml.so.1");
        std::printf("probe=%.2f gpus=%zu\n", since_start(), report.gpus.size());
        return report.initialised ? 0 : 1;
    }
    return minimal();
}
