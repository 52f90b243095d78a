// What each kind of NVML call provision's probe makes costs the driver, in
// a fresh process, one call after another: the ledger of --no-validate's
// detection.  Each line is one process: its calls summed by kind over every
// GPU, in ms.
//
//   bench/nvml_ledger                 every call kind, one after another
//   bench/nvml_ledger --health MODE   the health and activity reads alone,
//                                     MODE serial, per-gpu (a thread a GPU) or
//                                     two-per-gpu (as the probe reads them)
//   bench/nvml_ledger --nvlink-fields every call kind, the NVLink states read
//                                     in one field-values call a GPU instead
//                                     of a call a link
//
// Run it a dozen times a mode, alternating, and take medians: the first call
// of some kinds (ECC, the first NVLink state) pays for the driver's first
// look at that part of the GPU, so only a fresh process shows a start's cost.
#include <dlfcn.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// nvmlFieldValue_t and nvmlPciInfo_t as far as these calls need them.
struct FieldValue {
    unsigned field_id, scope_id;
    long long timestamp, latency_usec;
    int value_type, nvml_return;
    unsigned long long value;
};
struct PciInfo {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

void* nvml = nullptr;

template <typename Function>
Function resolve(const char* name) {
    return reinterpret_cast<Function>(dlsym(nvml, name));
}

// The calls summed by kind, in the order the kinds first came.
class Ledger {
public:
    void time(const std::string& kind, const std::function<void()>& call) {
        const Clock::time_point begin = Clock::now();
        call();
        const double took = ms_between(begin, Clock::now());
        for (auto& [name, total] : totals_)
            if (name == kind) {
                total += took;
                return;
            }
        totals_.emplace_back(kind, took);
    }
    void print(const char* label, double whole) const {
        std::printf("%s total=%.2f", label, whole);
        for (const auto& [name, total] : totals_) std::printf(" %s=%.2f", name.c_str(), total);
        std::printf("\n");
    }

private:
    std::vector<std::pair<std::string, double>> totals_;
};

void read_memory_health(void* gpu, Ledger& ledger) {
    unsigned long long count = 0;
    unsigned a = 0, b = 0, c = 0, d = 0;
    int flag = 0;
    ledger.time("ecc", [&] {
        resolve<int (*)(void*, int, int, unsigned long long*)>("nvmlDeviceGetTotalEccErrors")(gpu, 1, 0, &count);
    });
    ledger.time("retired_pending", [&] {
        resolve<int (*)(void*, int*)>("nvmlDeviceGetRetiredPagesPendingStatus")(gpu, &flag);
    });
    ledger.time("remapped_rows", [&] {
        using RemappedRows = int (*)(void*, unsigned*, unsigned*, unsigned*, unsigned*);
        resolve<RemappedRows>("nvmlDeviceGetRemappedRows")(gpu, &a, &b, &c, &d);
    });
    ledger.time("retired_pages", [&] {
        for (const int cause : {0, 1})
            resolve<int (*)(void*, int, unsigned*, void*)>("nvmlDeviceGetRetiredPages")(gpu, cause, &a, nullptr);
    });
    ledger.time("recovery_action", [&] {
        FieldValue field{};
        field.field_id = 230;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
        resolve<int (*)(void*, int, FieldValue*)>("nvmlDeviceGetFieldValues")(gpu, 1, &field);
    });
}

void read_activity(void* gpu, Ledger& ledger) {
    unsigned long long bits = 0;
    unsigned count = 0;
    int mode = 0;
    ledger.time("clocks_event_reasons", [&] {
        resolve<int (*)(void*, unsigned long long*)>("nvmlDeviceGetCurrentClocksEventReasons")(gpu, &bits);
    });
    ledger.time("processes", [&] {
        resolve<int (*)(void*, unsigned*, void*)>("nvmlDeviceGetComputeRunningProcesses_v3")(gpu, &count, nullptr);
    });
    ledger.time("compute_mode", [&] { resolve<int (*)(void*, int*)>("nvmlDeviceGetComputeMode")(gpu, &mode); });
}

// The links whose state the driver gives, by NVML_FI_DEV_NVLINK_GET_STATE
// (165) with each link as the scope, in one call.
std::vector<unsigned> links_by_fields(void* gpu, Ledger& ledger) {
    constexpr unsigned kLinks = 18;  // NVML_NVLINK_MAX_LINKS
    FieldValue fields[kLinks] = {};
    for (unsigned link = 0; link < kLinks; ++link) {
        fields[link].field_id = 165;
        fields[link].scope_id = link;
    }
    ledger.time("nvlink_state_fields", [&] {
        resolve<int (*)(void*, int, FieldValue*)>("nvmlDeviceGetFieldValues")(gpu, kLinks, fields);
    });
    std::vector<unsigned> links;
    for (unsigned link = 0; link < kLinks; ++link)
        if (fields[link].nvml_return == 0) links.push_back(link);
    return links;
}

// The links whose state the driver gives, a call a link.
std::vector<unsigned> links_one_by_one(void* gpu, Ledger& ledger) {
    std::vector<unsigned> links;
    for (unsigned link = 0; link < 36; ++link) {
        unsigned state = 0;
        int code = 0;
        ledger.time("nvlink_state", [&] {
            code = resolve<int (*)(void*, unsigned, unsigned*)>("nvmlDeviceGetNvLinkState")(gpu, link, &state);
        });
        if (code == 2) break;  // NVML_ERROR_INVALID_ARGUMENT: past the last link
        if (code == 0) links.push_back(link);
    }
    return links;
}

void read_links(void* gpu, Ledger& ledger, bool nvlink_fields) {
    PciInfo pci{};
    ledger.time("pci_info", [&] { resolve<int (*)(void*, PciInfo*)>("nvmlDeviceGetPciInfo_v3")(gpu, &pci); });
    for (const unsigned link : nvlink_fields ? links_by_fields(gpu, ledger) : links_one_by_one(gpu, ledger)) {
        int type = 0;
        ledger.time("nvlink_remote_type", [&] {
            resolve<int (*)(void*, unsigned, int*)>("nvmlDeviceGetNvLinkRemoteDeviceType")(gpu, link, &type);
        });
        ledger.time("nvlink_remote_pci", [&] {
            resolve<int (*)(void*, unsigned, PciInfo*)>("nvmlDeviceGetNvLinkRemotePciInfo_v2")(gpu, link, &pci);
        });
    }
    ledger.time("fabric", [&] {
        unsigned info[10] = {36 | (2u << 24)};  // nvmlGpuFabricInfo_v2_t, its version first
        if (auto fabric = resolve<int (*)(void*, void*)>("nvmlDeviceGetGpuFabricInfoV")) fabric(gpu, info);
    });
    ledger.time("pcie_replays", [&] {
        unsigned replays = 0;
        resolve<int (*)(void*, unsigned*)>("nvmlDeviceGetPcieReplayCounter")(gpu, &replays);
    });
    ledger.time("nvlink_error_totals", [&] {
        FieldValue fields[3] = {};
        for (unsigned i = 0; i < 3; ++i) fields[i].field_id = 161 + i;  // NVML_FI_DEV_NVLINK_ERROR_DL_*
        resolve<int (*)(void*, int, FieldValue*)>("nvmlDeviceGetFieldValues")(gpu, 3, fields);
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string health_mode = argc > 2 && std::strcmp(argv[1], "--health") == 0 ? argv[2] : "";
    const bool nvlink_fields = argc == 2 && std::strcmp(argv[1], "--nvlink-fields") == 0;
    if (argc > 1 && !nvlink_fields &&
        (health_mode.empty() ||
         (health_mode != "serial" && health_mode != "per-gpu" && health_mode != "two-per-gpu"))) {
        std::fprintf(stderr, "usage: nvml_ledger [--health serial|per-gpu|two-per-gpu | --nvlink-fields]\n");
        return 2;
    }
    const Clock::time_point start = Clock::now();
    nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml) {
        std::fprintf(stderr, "nvml_ledger: %s\n", dlerror());
        return 1;
    }
    Ledger ledger;
    int code = 0;
    ledger.time("init", [&] { code = resolve<int (*)()>("nvmlInit_v2")(); });
    if (code != 0) {
        std::fprintf(stderr, "nvml_ledger: nvmlInit_v2 failed (%d)\n", code);
        return 1;
    }
    unsigned count = 0;
    resolve<int (*)(unsigned*)>("nvmlDeviceGetCount_v2")(&count);
    std::vector<void*> gpus(count);
    for (unsigned i = 0; i < count; ++i)
        ledger.time("handle", [&] {
            resolve<int (*)(unsigned, void**)>("nvmlDeviceGetHandleByIndex_v2")(i, &gpus[i]);
        });

    if (!health_mode.empty()) {
        // One ledger a thread: only the wall time of the whole is compared.
        std::vector<Ledger> ledgers(2 * count);
        const Clock::time_point begin = Clock::now();
        if (health_mode == "serial") {
            for (unsigned i = 0; i < count; ++i) {
                read_memory_health(gpus[i], ledgers[0]);
                read_activity(gpus[i], ledgers[0]);
            }
        } else {
            std::vector<std::thread> threads;
            for (unsigned i = 0; i < count; ++i) {
                if (health_mode == "per-gpu") {
                    threads.emplace_back([&, i] {
                        read_memory_health(gpus[i], ledgers[2 * i]);
                        read_activity(gpus[i], ledgers[2 * i]);
                    });
                } else {
                    threads.emplace_back([&, i] { read_memory_health(gpus[i], ledgers[2 * i]); });
                    threads.emplace_back([&, i] { read_activity(gpus[i], ledgers[2 * i + 1]); });
                }
            }
            for (std::thread& thread : threads) thread.join();
        }
        std::printf("health-%s gpus=%u reads=%.2f\n", health_mode.c_str(), count, ms_between(begin, Clock::now()));
        resolve<int (*)()>("nvmlShutdown")();
        return 0;
    }

    for (void* gpu : gpus) {
        char text[96];
        unsigned current = 0, pending = 0;
        ledger.time("name_uuid_memory", [&] {
            unsigned long long memory[3];
            resolve<int (*)(void*, char*, unsigned)>("nvmlDeviceGetName")(gpu, text, sizeof text);
            resolve<int (*)(void*, char*, unsigned)>("nvmlDeviceGetUUID")(gpu, text, sizeof text);
            resolve<int (*)(void*, unsigned long long*)>("nvmlDeviceGetMemoryInfo")(gpu, memory);
        });
        ledger.time("mig_mode", [&] {
            resolve<int (*)(void*, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")(gpu, &current, &pending);
        });
    }
    for (void* gpu : gpus) {
        read_memory_health(gpu, ledger);
        read_activity(gpu, ledger);
    }
    if (count > 1) {
        for (void* gpu : gpus) read_links(gpu, ledger, nvlink_fields);
        ledger.time("p2p_status_first_pair", [&] {
            int status = 0;
            for (const int index : {0, 1})  // read, write
                resolve<int (*)(void*, void*, int, int*)>("nvmlDeviceGetP2PStatus")(gpus[0], gpus[1], index, &status);
        });
    }
    ledger.time("shutdown", [&] { resolve<int (*)()>("nvmlShutdown")(); });
    ledger.print("ledger", ms_between(start, Clock::now()));
    return 0;
}
