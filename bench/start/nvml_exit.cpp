// How a process that has read NVML leaves, timed whole from outside: what
// NVML's close adds to a start that ends after it.  The process loads NVML,
// names every GPU (with `ecc`, also reads each one's uncorrected ECC total,
// the memory read provision's probe makes first), then
//
//   exit      leaves NVML to the process's exit (the kernel closes it)
//   shutdown  calls nvmlShutdown, then exits
//   held      forks a child that keeps NVML's descriptors and leaves when
//             this process has gone, so the driver's close happens there
//
//   bench/start/interleave "exit=build/bench/nvml_exit exit"
//       "held=build/bench/nvml_exit held" "ecc=build/bench/nvml_exit exit ecc" ...
//   (one command line)
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using InitFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, void**);
using NameFn = int (*)(void*, char*, unsigned);
using EccTotalFn = int (*)(void*, int, int, unsigned long long*);
using ShutdownFn = int (*)();

constexpr int kUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kAggregate = 1;    // NVML_AGGREGATE_ECC

// In the child: everything but NVML's device files and `keep` closed, stdio
// on /dev/null, so no reader of the parent's output waits for this process.
void keep_only_nvidia_files(int keep) {
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) std::_Exit(1);
    const int listing = dirfd(dir);
    while (const dirent* entry = readdir(dir)) {
        const int fd = std::atoi(entry->d_name);
        if (entry->d_name[0] == '.' || fd <= 2 || fd == keep || fd == listing) continue;
        char link[64], target[256] = {};
        std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        if (readlink(link, target, sizeof target - 1) < 0 || std::strncmp(target, "/dev/nvidia", 11) != 0) close(fd);
    }
    closedir(dir);
}

// The child reads until this process's end of the pipe closes (at its exit).
void hold_nvml_past_exit() {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) std::_Exit(1);
    const pid_t pid = fork();
    if (pid < 0) std::_Exit(1);
    if (pid == 0) {
        close(ends[1]);
        keep_only_nvidia_files(ends[0]);
        char byte = 0;
        while (read(ends[0], &byte, 1) > 0) {
        }
        std::_Exit(0);
    }
    close(ends[0]);
}

template <typename Function>
Function resolve(void* library, const char* name) {
    void* symbol = dlsym(library, name);
    if (!symbol) {
        std::fprintf(stderr, "NVML lacks %s\n", name);
        std::exit(2);
    }
    return reinterpret_cast<Function>(symbol);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string how = argc > 1 ? argv[1] : "exit";
    const bool ecc = argc > 2 && std::string(argv[2]) == "ecc";
    if (how != "exit" && how != "shutdown" && how != "held") {
        std::fprintf(stderr, "usage: nvml_exit exit|shutdown|held [ecc]\n");
        return 2;
    }
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!library) {
        std::fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    if (resolve<InitFn>(library, "nvmlInit_v2")() != 0) return 3;
    const auto handle_of = resolve<HandleFn>(library, "nvmlDeviceGetHandleByIndex_v2");
    const auto name_of = resolve<NameFn>(library, "nvmlDeviceGetName");
    const auto ecc_total = resolve<EccTotalFn>(library, "nvmlDeviceGetTotalEccErrors");
    unsigned count = 0;
    if (resolve<CountFn>(library, "nvmlDeviceGetCount_v2")(&count) != 0) return 3;
    for (unsigned index = 0; index < count; ++index) {
        void* device = nullptr;
        char name[96] = {};
        if (handle_of(index, &device) != 0 || name_of(device, name, sizeof name) != 0) return 3;
        unsigned long long errors = 0;
        if (ecc) ecc_total(device, kUncorrected, kAggregate, &errors);
        std::printf("%s\n", name);
    }
    std::fflush(stdout);
    if (how == "shutdown") resolve<ShutdownFn>(library, "nvmlShutdown")();
    if (how == "held") hold_nvml_past_exit();
    return 0;
}
