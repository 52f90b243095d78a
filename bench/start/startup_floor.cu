// The least a start must do that proves every visible GPU: NVML names the
// GPUs while CUDA opens each of them (cuInit, a context) and runs one
// trivial kernel there.  gpu-bench times this whole process as the floor
// provision's own start is held to.
//
// As provision does, the GPU work runs in a child and the timed process
// leaves as soon as the child says every GPU has run its kernel: the
// driver's teardown of the contexts (about 0.1 s a GPU) is left to the
// child, so neither side pays it.
//
// Layouts (--layout), to choose how provision's workers open the GPUs:
//   threads     one process, each GPU opened from a thread of its own (the floor)
//   sequential  one process, the GPUs opened one after another
//   processes   one process per GPU (CUDA_VISIBLE_DEVICES set to that GPU),
//               all started together
//   threads-and-far
//               one process as in threads, and beside it a second that opens
//               every GPU but the first the same way: the far side of the
//               pair checks, which must be another process (a cuMem import
//               needs a context in the importing process), opening its GPUs
//               at the same time
//   halves      two processes, each opening half of the GPUs from a thread
//               each: the fewest processes that still put every GPU's
//               export and import across a process boundary (the pairs
//               within a half would be copied in-process)
// --parent-cuinit adds a cuInit over every GPU in the timed process beside
// the children, as a parent that asks CUDA for its device order would.
// --wait makes the process wait for its children's exit, their contexts'
// teardown included: a workload that opens every GPU and ends, as
// bench/start/handoff runs it alone and behind provision.
//
// Prints one line: each phase's end in ms since the process started.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
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
const Clock::time_point kStart = Clock::now();

double since_start() { return std::chrono::duration<double, std::milli>(Clock::now() - kStart).count(); }

__global__ void touch(int* flag) { *flag = 1; }

[[noreturn]] void fail(const char* what, cudaError_t status) {
    std::fprintf(stderr, "startup_floor: %s: %s\n", what, cudaGetErrorString(status));
    std::_Exit(1);
}

void require(cudaError_t status, const char* what) {
    if (status != cudaSuccess) fail(what, status);
}

// Opens `device` (its primary context) and runs the kernel there.
void open_and_touch(int device) {
    require(cudaSetDevice(device), "cudaSetDevice");
    int* flag = nullptr;
    require(cudaMalloc(&flag, sizeof(int)), "cudaMalloc");
    touch<<<1, 1>>>(flag);
    require(cudaGetLastError(), "launch");
    require(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// NVML as provision's detection reads it: names and capabilities.
double nvml_names() {
    void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml) return -1;
    using Init = int (*)();
    using Count = int (*)(unsigned*);
    using Handle = int (*)(unsigned, void**);
    using Name = int (*)(void*, char*, unsigned);
    using Capability = int (*)(void*, int*, int*);
    auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
    auto count = reinterpret_cast<Count>(dlsym(nvml, "nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<Handle>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
    auto name = reinterpret_cast<Name>(dlsym(nvml, "nvmlDeviceGetName"));
    auto capability = reinterpret_cast<Capability>(dlsym(nvml, "nvmlDeviceGetCudaComputeCapability"));
    if (!init || !count || !handle || !name || !capability || init() != 0) return -1;
    unsigned gpus = 0;
    count(&gpus);
    for (unsigned i = 0; i < gpus; ++i) {
        void* device = nullptr;
        char text[96] = {};
        int major = 0, minor = 0;
        if (handle(i, &device) != 0) continue;
        name(device, text, sizeof text);
        capability(device, &major, &minor);
    }
    return since_start();
}

// The CUDA_VISIBLE_DEVICES entry of each GPU a process of its own opens:
// the caller's entries, else 0..count-1 (count: the /dev/nvidiaN nodes).
std::vector<std::string> visible_entries() {
    std::vector<std::string> entries;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        std::string text = visible;
        for (std::size_t start = 0; start <= text.size();) {
            const std::size_t comma = std::min(text.find(',', start), text.size());
            if (comma > start) entries.push_back(text.substr(start, comma - start));
            start = comma + 1;
        }
        return entries;
    }
    for (int i = 0; i < 64; ++i)
        if (access(("/dev/nvidia" + std::to_string(i)).c_str(), F_OK) == 0) entries.push_back(std::to_string(i));
    return entries;
}

// One process's GPU work; writes "PREFIXcuinit=MS PREFIXready0=MS ..." to `out`.
void open_gpus(int out, bool sequential, const std::string& prefix) {
    int count = 0;
    require(cudaGetDeviceCount(&count), "cudaGetDeviceCount");  // cuInit
    const double cuinit = since_start();
    std::vector<double> ready(count);
    if (sequential) {
        for (int device = 0; device < count; ++device) {
            open_and_touch(device);
            ready[device] = since_start();
        }
    } else {
        std::vector<std::thread> threads;
        for (int device = 0; device < count; ++device)
            threads.emplace_back([device, &ready] {
                open_and_touch(device);
                ready[device] = since_start();
            });
        for (auto& thread : threads) thread.join();
    }
    std::string line = prefix + "cuinit=" + std::to_string(cuinit);
    for (int device = 0; device < count; ++device)
        line += " " + prefix + "ready" + std::to_string(device) + "=" + std::to_string(ready[device]);
    line += "\n";
    if (write(out, line.data(), line.size()) < 0) std::_Exit(1);
}

// The children this process started (behind provision, its validation
// workers are children too, and are not waited for).
std::vector<pid_t>& started_children() {
    static std::vector<pid_t> pids;
    return pids;
}

// Starts a child that runs `work(pipe)`; returns the pipe's read end.
template <typename Work>
int start_child(const std::string& visible, Work work) {
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    const pid_t pid = fork();
    if (pid < 0) std::exit(1);
    if (pid == 0) {
        close(fds[0]);
        if (!visible.empty()) setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);  // the timed process's caller must not wait for the child's output
        work(fds[1]);
        close(fds[1]);
        std::_Exit(0);  // the teardown happens here, after the parent has gone
    }
    close(fds[1]);
    started_children().push_back(pid);
    return fds[0];
}

std::string read_all(int fd) {
    std::string text;
    char buffer[512];
    for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
    close(fd);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    std::string layout = "threads";
    bool nvml = true, parent_cuinit = false, wait = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--layout" && i + 1 < argc) {
            layout = argv[++i];
        } else if (arg == "--no-nvml") {
            nvml = false;
        } else if (arg == "--parent-cuinit") {
            parent_cuinit = true;
        } else if (arg == "--wait") {
            wait = true;
        } else {
            std::fprintf(stderr, "usage: startup_floor [--layout threads|sequential|processes|threads-and-far|halves] "
                                 "[--no-nvml] [--parent-cuinit] [--wait]\n");
            return 2;
        }
    }
    if (layout != "threads" && layout != "sequential" && layout != "processes" && layout != "threads-and-far" &&
        layout != "halves") {
        std::fprintf(stderr, "startup_floor: unknown layout '%s'\n", layout.c_str());
        return 2;
    }
    std::vector<int> children;
    if (layout == "processes") {
        for (const std::string& entry : visible_entries()) {
            const std::string prefix = "p" + std::to_string(children.size()) + "_";
            children.push_back(start_child(entry, [prefix](int out) { open_gpus(out, false, prefix); }));
        }
    } else if (layout == "halves") {
        const std::vector<std::string> entries = visible_entries();
        std::string halves[2];
        for (std::size_t i = 0; i < entries.size(); ++i) {
            std::string& half = halves[i < (entries.size() + 1) / 2 ? 0 : 1];
            half += (half.empty() ? "" : ",") + entries[i];
        }
        for (int h = 0; h < 2; ++h) {
            if (halves[h].empty()) continue;
            const std::string prefix = "h" + std::to_string(h) + "_";
            children.push_back(start_child(halves[h], [prefix](int out) { open_gpus(out, false, prefix); }));
        }
    } else {
        const bool sequential = layout == "sequential";
        children.push_back(start_child("", [sequential](int out) { open_gpus(out, sequential, ""); }));
    }
    if (layout == "threads-and-far") {
        const std::vector<std::string> entries = visible_entries();
        std::string far;
        for (std::size_t i = 1; i < entries.size(); ++i) far += (far.empty() ? "" : ",") + entries[i];
        if (!far.empty()) children.push_back(start_child(far, [](int out) { open_gpus(out, false, "far_"); }));
    }
    double nvml_ms = -1, parent_cuinit_ms = -1;
    std::thread names([&] { nvml_ms = nvml ? nvml_names() : -1; });
    if (parent_cuinit) {
        int count = 0;
        require(cudaGetDeviceCount(&count), "cudaGetDeviceCount (parent)");
        parent_cuinit_ms = since_start();
    }
    std::string lines;
    bool every_child = true;
    for (int fd : children) {
        const std::string line = read_all(fd);
        every_child = every_child && !line.empty();  // a child that failed said why on stderr
        lines += " [" + line + "]";
    }
    names.join();
    if (!every_child) std::_Exit(1);
    double torn_down = -1;
    if (wait) {
        for (const pid_t child : started_children()) waitpid(child, nullptr, 0);  // its own alone
        torn_down = since_start();
    }
    std::printf("layout=%s nvml=%.1f parent_cuinit=%.1f all_ready=%.1f torn_down=%.1f children=%s\n", layout.c_str(),
                nvml_ms, parent_cuinit_ms, since_start(), torn_down, lines.c_str());
    std::fflush(stdout);
    std::_Exit(0);  // the children tear their contexts down on their own
}
