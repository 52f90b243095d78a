// The floor of a verifier that proves every visible GPU in a child and hands
// off with exec: the comparator of provision's handoff (docs/PERFORMANCE.md,
// "What provision adds in front of the workload").  It does the steps
// provision's handoff does and nothing more: NVML (init, count, each GPU's
// name), cuInit, then from a thread per GPU its primary context, an
// allocation (FLOOR_ALLOC_MIB, 1 by default), a memset and a synchronize.
//
//   exec_floor                 the work in this process, which then exits and
//                              waits for its own teardown (a workload that
//                              opens every GPU and ends)
//   exec_floor detached        the work in a child; this process leaves when
//                              the child says it is done, the child's
//                              teardown left behind (provision --check's floor)
//   exec_floor exec PROG ARG.. the same, then this process execs PROG at once,
//                              so the child's teardown overlaps PROG's start
//                              as provision's workers' overlaps the workload's
//
// The same steps as the reference program floor_probe.c that the handoff's
// targets were set against, so a ratio to it reads the same.  Prints one
// line of phases (ms from the start): nvml_ms, cuInit_ms, contexts_ms,
// total_ms; in exec mode the line is dropped and PROG's output is what shows.
// FLOOR_CLOCK=1 adds entered_at_ms and done_at_ms, CLOCK_MONOTONIC (steady_clock) at main's
// entry and at the end of the work, to be set beside another process's times.
// The driver is loaded with dlopen: it builds without a CUDA toolkit.
#include <dlfcn.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point from) {
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

// The driver's entry points, each status checked: a comparator that failed
// silently would make provision look slow.
struct Driver {
    int (*init)(unsigned) = nullptr;
    int (*count)(int*) = nullptr;
    int (*device)(int*, int) = nullptr;
    int (*retain)(void**, int) = nullptr;
    int (*set_current)(void*) = nullptr;
    int (*alloc)(unsigned long long*, std::size_t) = nullptr;
    int (*memset32)(unsigned long long, unsigned, std::size_t) = nullptr;
    int (*synchronize)() = nullptr;
};

template <typename Function>
void bind(void* library, Function& function, const char* name) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (!function) {
        std::fprintf(stderr, "exec_floor: libcuda has no %s\n", name);
        std::exit(1);
    }
}

void check(int status, const char* what, int gpu) {
    if (status == 0) return;
    std::fprintf(stderr, "exec_floor: %s on GPU %d returned CUDA error %d\n", what, gpu, status);
    std::exit(1);
}

void read_nvml() {
    void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!nvml) return;  // as the reference: NVML is read where it is present
    using Init = int (*)();
    using Count = int (*)(unsigned*);
    using Handle = int (*)(unsigned, void**);
    using Name = int (*)(void*, char*, unsigned);
    auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
    auto count = reinterpret_cast<Count>(dlsym(nvml, "nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<Handle>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
    auto name = reinterpret_cast<Name>(dlsym(nvml, "nvmlDeviceGetName"));
    if (!init || !count || !handle || !name || init() != 0) return;
    unsigned gpus = 0;
    if (count(&gpus) != 0) return;
    for (unsigned i = 0; i < gpus; ++i) {
        void* device = nullptr;
        char text[96];
        if (handle(i, &device) == 0) name(device, text, sizeof text);
    }
}

void open_gpu(const Driver& cuda, int index, std::size_t bytes) {
    int device = 0;
    void* context = nullptr;
    unsigned long long memory = 0;
    check(cuda.device(&device, index), "cuDeviceGet", index);
    check(cuda.retain(&context, device), "cuDevicePrimaryCtxRetain", index);
    check(cuda.set_current(context), "cuCtxSetCurrent", index);
    check(cuda.alloc(&memory, bytes), "cuMemAlloc", index);
    check(cuda.memset32(memory, 0x5a5a5a5a, bytes / 4), "cuMemsetD32", index);
    check(cuda.synchronize(), "cuCtxSynchronize", index);
}

double clock_ms() {
    return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

std::string prove_every_gpu(double entered_at_ms) {
    std::size_t bytes = std::size_t{1} << 20;
    if (const char* mib = std::getenv("FLOOR_ALLOC_MIB"); mib && std::atoi(mib) > 0)
        bytes = static_cast<std::size_t>(std::atoi(mib)) << 20;
    const auto start = Clock::now();
    read_nvml();
    const double nvml_ms = ms_since(start);
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    if (!library) {
        std::fprintf(stderr, "exec_floor: no libcuda.so.1\n");
        std::exit(1);
    }
    Driver cuda;
    bind(library, cuda.init, "cuInit");
    bind(library, cuda.count, "cuDeviceGetCount");
    bind(library, cuda.device, "cuDeviceGet");
    bind(library, cuda.retain, "cuDevicePrimaryCtxRetain");
    bind(library, cuda.set_current, "cuCtxSetCurrent");
    bind(library, cuda.alloc, "cuMemAlloc_v2");
    bind(library, cuda.memset32, "cuMemsetD32_v2");
    bind(library, cuda.synchronize, "cuCtxSynchronize");
    check(cuda.init(0), "cuInit", -1);
    const double init_ms = ms_since(start);
    int gpus = 0;
    check(cuda.count(&gpus), "cuDeviceGetCount", -1);
    std::vector<std::thread> threads;
    for (int i = 0; i < gpus; ++i) threads.emplace_back(open_gpu, std::cref(cuda), i, bytes);
    for (std::thread& thread : threads) thread.join();
    const double total_ms = ms_since(start);
    char line[320];
    std::snprintf(line, sizeof line, "visible=%d nvml_ms=%.1f cuInit_ms=%.1f contexts_ms=%.1f total_ms=%.1f", gpus,
                  nvml_ms, init_ms - nvml_ms, total_ms - init_ms, total_ms);
    std::string text = line;
    if (const char* clock = std::getenv("FLOOR_CLOCK"); clock && std::strcmp(clock, "1") == 0) {
        std::snprintf(line, sizeof line, " entered_at_ms=%.3f done_at_ms=%.3f", entered_at_ms, clock_ms());
        text += line;
    }
    return text + "\n";
}

// Experimental orders of the child's exit against the exec:
//   exec-after   the child exits once the parent has exec'd (its end of the pipe gone)
//   exec-linger  ... and once some process has opened a GPU's device node after that
//                (the workload attaching), or 2 s at most
void leave_when(const char* mode, int pipe_end) {
    int watch = -1;
    if (std::strcmp(mode, "exec-linger") == 0) {
        watch = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        for (int i = 0; i < 16; ++i)
            inotify_add_watch(watch, ("/dev/nvidia" + std::to_string(i)).c_str(), IN_OPEN);
    }
    pollfd gone{pipe_end, 0, 0};
    poll(&gone, 1, 2000);  // POLLERR once the reader is gone
    if (watch < 0) return;
    char events[4096];
    while (read(watch, events, sizeof events) > 0) {}  // opens before the exec were its own
    pollfd opened{watch, POLLIN, 0};
    poll(&opened, 1, 2000);
}

}  // namespace

int main(int argc, char** argv) {
    const double entered_at_ms = clock_ms();
    const bool exec_mode = argc > 2 && std::strncmp(argv[1], "exec", 4) == 0;
    const bool detached = argc > 1 && std::strcmp(argv[1], "detached") == 0;
    if (!exec_mode && !detached) {
        std::fputs(prove_every_gpu(entered_at_ms).c_str(), stdout);
        return 0;
    }
    int done[2];
    if (pipe(done) != 0) return 1;
    const pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        close(done[0]);
        const std::string line = prove_every_gpu(entered_at_ms);
        if (write(done[1], line.data(), line.size()) < 0) return 1;
        if (exec_mode && std::strcmp(argv[1], "exec") != 0) leave_when(argv[1], done[1]);
        return 0;  // the teardown of its contexts follows, the parent gone on
    }
    close(done[1]);
    char line[256];
    const ssize_t got = read(done[0], line, sizeof line - 1);
    if (got <= 0) return 1;  // the child failed and said why on stderr
    if (!exec_mode) {
        line[got] = 0;
        std::fputs(line, stdout);
        return 0;
    }
    close(done[0]);
    unsetenv("FLOOR_ALLOC_MIB");
    execvp(argv[2], argv + 2);
    std::perror("exec_floor: execvp");
    return 127;
}
