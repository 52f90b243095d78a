// Where NVML's time goes in a start: a library that stands in for
// libnvidia-ml (PROVISION_NVML_LIBRARY=.../libnvml_calls.so), forwards every
// call provision makes to the real one, and once NVML is shut down prints each function's
// calls, total and longest time, and each thread's first and last moment, so
// a probe's cost can be told apart call by call:
//
//   PROVISION_NVML_LIBRARY=build/bench/libnvml_calls.so provision --check --no-validate
//
// With NVML_CALLS_TIMELINE=1 it also prints every call in the order it
// began (thread, start and end after load), to find the critical path.
//
// Every function forwarded takes only integers and pointers, so one shape of
// wrapper (six integer registers, x86-64 System V) serves them all.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Word = std::uintptr_t;
using Forward = int (*)(Word, Word, Word, Word, Word, Word);

struct Tally {
    int calls = 0;
    double total_ms = 0;
    double longest_ms = 0;
};

struct Span {
    double first_ms = -1;
    double last_ms = 0;
    int calls = 0;
};

struct Call {
    std::string name;
    unsigned long thread;
    double start_ms, end_ms;
};

struct Ledger {
    std::mutex mutex;
    bool printed = false;
    std::vector<Call> calls;
    Clock::time_point loaded = Clock::now();
    std::map<std::string, Tally> functions;
    std::map<unsigned long, Span> threads;
    void* real = nullptr;

    void print() {
        std::lock_guard lock(mutex);
        if (printed) return;
        printed = true;
        std::fprintf(stderr, "nvml_calls: function | calls | total ms | longest ms\n");
        for (const auto& [name, tally] : functions)
            std::fprintf(stderr, "nvml_calls: %s | %d | %.3f | %.3f\n", name.c_str(), tally.calls, tally.total_ms,
                         tally.longest_ms);
        for (const auto& [thread, span] : threads)
            std::fprintf(stderr, "nvml_calls: thread %lx | %d calls | from %.3f to %.3f ms after load\n", thread,
                         span.calls, span.first_ms, span.last_ms);
        if (const char* timeline = std::getenv("NVML_CALLS_TIMELINE"); timeline && *timeline == '1') {
            std::map<unsigned long, int> thread_number;
            for (const auto& [thread, span] : threads) thread_number.emplace(thread, static_cast<int>(thread_number.size()));
            std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.start_ms < b.start_ms; });
            for (const Call& call : calls)
                std::fprintf(stderr, "nvml_calls: timeline | thread %d | %8.3f to %8.3f ms | %6.3f ms | %s\n",
                             thread_number[call.thread], call.start_ms, call.end_ms, call.end_ms - call.start_ms,
                             call.name.c_str());
        }
    }
};

Ledger& ledger() {
    static Ledger* instance = new Ledger;  // never destroyed: the exit's printing needs it
    return *instance;
}

double since_load(Clock::time_point at) {
    return std::chrono::duration<double, std::milli>(at - ledger().loaded).count();
}

Forward resolve(const char* name) {
    auto& book = ledger();
    {
        std::lock_guard lock(book.mutex);
        if (!book.real) book.real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    return book.real ? reinterpret_cast<Forward>(dlsym(book.real, name)) : nullptr;
}

int timed(const char* name, Forward& target, Word a, Word b, Word c, Word d, Word e, Word f) {
    if (!target) target = resolve(name);
    if (!target) return 13;  // NVML_ERROR_FUNCTION_NOT_FOUND
    const auto start = Clock::now();
    const int status = target(a, b, c, d, e, f);
    const auto end = Clock::now();
    auto& book = ledger();
    std::lock_guard lock(book.mutex);
    const double ms = std::chrono::duration<double, std::milli>(end - start).count();
    auto& tally = book.functions[name];
    ++tally.calls;
    tally.total_ms += ms;
    if (ms > tally.longest_ms) tally.longest_ms = ms;
    auto& span = book.threads[static_cast<unsigned long>(pthread_self())];
    if (span.first_ms < 0) span.first_ms = since_load(start);
    span.last_ms = since_load(end);
    ++span.calls;
    book.calls.push_back({name, static_cast<unsigned long>(pthread_self()), since_load(start), since_load(end)});
    return status;
}

}  // namespace

#define NVML_CALLS_FORWARD(name)                                                       \
    extern "C" __attribute__((visibility("default"))) int name(Word a, Word b, Word c, \
                                                               Word d, Word e, Word f) { \
        static Forward target = nullptr;                                               \
        return timed(#name, target, a, b, c, d, e, f);                                 \
    }

NVML_CALLS_FORWARD(nvmlInit_v2)

// The tally is printed once NVML is shut down (provision may end with _exit),
// or at the exit of a process that leaves NVML open.
__attribute__((destructor)) static void print_at_exit() { ledger().print(); }

extern "C" __attribute__((visibility("default"))) int nvmlShutdown(Word a, Word b, Word c, Word d, Word e, Word f) {
    static Forward target = nullptr;
    const int status = timed("nvmlShutdown", target, a, b, c, d, e, f);
    ledger().print();
    return status;
}
NVML_CALLS_FORWARD(nvmlSystemGetDriverVersion)
NVML_CALLS_FORWARD(nvmlSystemGetCudaDriverVersion_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetCount_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetHandleByIndex_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetName)
NVML_CALLS_FORWARD(nvmlDeviceGetUUID)
NVML_CALLS_FORWARD(nvmlDeviceGetCudaComputeCapability)
NVML_CALLS_FORWARD(nvmlDeviceGetMemoryInfo)
NVML_CALLS_FORWARD(nvmlDeviceGetMemoryInfo_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetTotalEccErrors)
NVML_CALLS_FORWARD(nvmlDeviceGetRetiredPagesPendingStatus)
NVML_CALLS_FORWARD(nvmlDeviceGetRemappedRows)
NVML_CALLS_FORWARD(nvmlDeviceGetMigMode)
NVML_CALLS_FORWARD(nvmlDeviceGetCurrentClocksEventReasons)
NVML_CALLS_FORWARD(nvmlDeviceGetCurrentClocksThrottleReasons)
NVML_CALLS_FORWARD(nvmlDeviceGetComputeRunningProcesses)
NVML_CALLS_FORWARD(nvmlDeviceGetComputeRunningProcesses_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetComputeRunningProcesses_v3)
NVML_CALLS_FORWARD(nvmlDeviceGetComputeMode)
NVML_CALLS_FORWARD(nvmlDeviceGetTopologyCommonAncestor)
NVML_CALLS_FORWARD(nvmlDeviceGetPciInfo_v3)
NVML_CALLS_FORWARD(nvmlDeviceGetP2PStatus)
NVML_CALLS_FORWARD(nvmlDeviceGetNvLinkVersion)
NVML_CALLS_FORWARD(nvmlDeviceGetNvLinkState)
NVML_CALLS_FORWARD(nvmlDeviceGetNvLinkRemotePciInfo_v2)
NVML_CALLS_FORWARD(nvmlDeviceGetNvLinkRemoteDeviceType)
NVML_CALLS_FORWARD(nvmlDeviceGetMaxPcieLinkWidth)
NVML_CALLS_FORWARD(nvmlDeviceGetMaxPcieLinkGeneration)
NVML_CALLS_FORWARD(nvmlDeviceGetCurrPcieLinkWidth)
NVML_CALLS_FORWARD(nvmlDeviceGetCurrPcieLinkGeneration)
NVML_CALLS_FORWARD(nvmlDeviceGetGpuFabricInfoV)
NVML_CALLS_FORWARD(nvmlDeviceGetGpuFabricInfo)
NVML_CALLS_FORWARD(nvmlDeviceGetFieldValues)
NVML_CALLS_FORWARD(nvmlDeviceGetNvLinkErrorCounter)
NVML_CALLS_FORWARD(nvmlDeviceGetPcieReplayCounter)
NVML_CALLS_FORWARD(nvmlDeviceGetRetiredPages)
NVML_CALLS_FORWARD(nvmlEventSetCreate)
NVML_CALLS_FORWARD(nvmlDeviceRegisterEvents)
NVML_CALLS_FORWARD(nvmlEventSetWait_v2)
NVML_CALLS_FORWARD(nvmlEventSetFree)

extern "C" __attribute__((visibility("default"))) const char* nvmlErrorString(int code) {
    using ErrorString = const char* (*)(int);
    static ErrorString target = nullptr;
    if (!target) target = reinterpret_cast<ErrorString>(reinterpret_cast<void*>(resolve("nvmlErrorString")));
    return target ? target(code) : "unknown NVML error";
}
