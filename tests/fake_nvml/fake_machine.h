// The machine that the fake NVML and libcuda libraries pretend to drive: a
// GPU fixture file (PROVISION_FAKE_GPU_FIXTURE, same format as
// --gpu-fixture) plus a [faults] table that makes the driver misbehave:
//
//   [faults]
//   nvml_init_error = 18          # NVML error code that nvmlInit_v2 returns
//                                 #   (9 driver not loaded, 18 version mismatch)
//   nvml_init_delay_ms = 5000     # nvmlInit_v2 sleeps first (a hung driver),
//                                 #   then fails with NVML_ERROR_TIMEOUT
//   nvml_init_slow_ms = 500       # nvmlInit_v2 sleeps first, then succeeds (a slow start)
//   cuda_init_error = 803         # CUresult that cuInit returns
//   cuda_init_delay_ms = 5000     # cuInit sleeps first, then fails
//   context_delay_ms = 300        # creating a context takes this long (it succeeds)
//   handle_open_delay_ms = 300    # opening a peer's memory takes this long: a legacy
//                                 #   handle (cuIpcOpenMemHandle_v2) or a cuMem
//                                 #   descriptor (cuMemImportFromShareableHandle)
//   contexts_meet = 8             # context creations wait for each other in groups
//   openings_meet = 8             #   of this many (openings of peer memory likewise),
//                                 #   across processes, 30 s at most: callers that are
//                                 #   truly under way at once meet however slow the
//                                 #   machine, callers one after the other never do
//                                 #   (needs the context or open log, below)
//   host_numa_id = 0              # CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID (default 0)
//   fabric_states = ["completed", "in-progress"]
//                                 # each GPU's NVSwitch fabric, by position, as
//                                 #   nvmlDeviceGetGpuFabricInfoV answers it ("not-supported",
//                                 #   "not-started", "in-progress", "completed"); absent: the
//                                 #   call answers NOT_SUPPORTED
//   fabric_version = 3            # the newest fabric info the fake driver answers: 4
//                                 #   (nvmlDeviceGetGpuFabricInfo_v4, the default), 3 or 2
//                                 #   (nvmlDeviceGetGpuFabricInfoV), 1 (nvmlDeviceGetGpuFabricInfo)
//   fabric_cluster = "00112233445566778899aabbccddeeff"
//                                 # every GPU's cluster UUID, 32 hex digits (absent: zero,
//                                 #   no multi-node NVLink)
//   fabric_cliques = [7, 7]       # each GPU's clique id, by position (default 0)
//   fabric_health_mask = [170, 170]  # each GPU's healthMask (0xaa: healthy; default 0)
//   fabric_health = ["healthy", "unhealthy"]
//                                 # each GPU's healthSummary ("healthy", "unhealthy",
//                                 #   "limited-capacity"; default not supported)
//   fabric_handles = "unsupported"  # CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED 0
//                                 #   (default 1, as on the lent H100); fabric memory
//                                 #   fails through failing_calls: "cuMemCreate.fabric"
//                                 #   (800: no IMEX channel), "cuMemExportToShareableHandle.fabric",
//                                 #   "cuMemImportFromShareableHandle.fabric" (400: invalid
//                                 #   resource handle)
//   listed_processes = [{ pid = 4242, mib = 528 }]
//                                 # every GPU's process list also names these
//                                 #   (after the fixture's other_processes)
//   lost_gpus = [1]               # fixture positions: NVML queries answer
//                                 #   NVML_ERROR_GPU_IS_LOST, libcuda omits them
//   cuda_order = [1, 0]           # CUDA's enumeration order as fixture
//                                 #   positions (CUDA_DEVICE_ORDER=FASTEST_FIRST)
//   link_error_rise = { nvlink_crc = 500, pcie_replays = 3 }
//                                 # every GPU's link error counters (the keys of
//                                 #   [gpus.health.link_errors]) read this much higher
//                                 #   from their second reading in a process on, as a
//                                 #   link that fails under the copies
//   xid_events = [{ gpu = 0, xid = 79 }]
//                                 # Xid events an NVML event set delivers, each once,
//                                 #   to a set its GPU is registered with; the file is
//                                 #   read again at each wait, so a test can add some
//   failing_calls = [{ function = "nvmlDeviceGetMemoryInfo", gpu = 1, error = 999 }]
//                                 # "cuMemCreate.host_numa" fails only host NUMA memory;
//                                 #   "cuIpcGetMemHandle" is asked at export (legacy)
//
// Each GPU's optional [gpus.health] table (gpu_fixture.h) is what the fake
// NVML's health queries answer; its nvlinks and pcie and the [[links]] what
// the topology calls answer (fake_nvml.cpp says how links are laid out).  The fake libcuda applies
// CUDA_VISIBLE_DEVICES, as the real one does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_fixture.h"

namespace fake {

struct FailingCall {
    std::string function;
    std::size_t gpu = 0;
    int error = 0;
};

struct Machine {
    provision::GpuFixture fixture;
    int nvml_init_error = 0;
    int nvml_init_delay_ms = 0;
    int nvml_init_slow_ms = 0;
    int cuda_init_error = 0;
    int cuda_init_delay_ms = 0;
    int context_delay_ms = 0;  // cuDevicePrimaryCtxRetain sleeps this long, then succeeds
    int handle_open_delay_ms = 0;  // cuIpcOpenMemHandle_v2 and cuMemImportFromShareableHandle sleep this long
    int contexts_meet = 0;         // context creations wait for each other in groups of this many
    int openings_meet = 0;         // openings of peer memory likewise
    int host_numa_id = 0;
    std::vector<int> fabric_states;  // NVML_GPU_FABRIC_STATE_* by GPU position; empty: no fabric
    int fabric_version = 4;
    unsigned char fabric_cluster[16] = {};
    std::vector<unsigned> fabric_cliques;       // by GPU position; empty: 0
    std::vector<unsigned> fabric_health_masks;  // by GPU position; empty: 0
    std::vector<int> fabric_health;             // NVML_GPU_FABRIC_HEALTH_SUMMARY_* by position; empty: 0
    bool fabric_handles = true;                 // CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED
    struct ListedProcess {
        long pid = 0;
        unsigned long long mib = 0;
    };
    std::vector<ListedProcess> listed_processes;  // on every GPU's compute process list
    std::vector<std::size_t> lost_gpus;
    std::vector<std::size_t> cuda_order;  // empty: fixture order
    std::vector<FailingCall> failing_calls;
    provision::LinkErrorCounts link_error_rise;
    struct XidEvent {
        std::size_t gpu = 0;
        int xid = 0;
    };
    std::vector<XidEvent> xid_events;

    bool lost(std::size_t gpu) const;
    // The error `function` must return for `gpu`, or 0.
    int failure(const std::string& function, std::size_t gpu) const;
};

// Reads $PROVISION_FAKE_GPU_FIXTURE.  nullptr (with the reason on stderr)
// when it is unset or invalid.
std::shared_ptr<const Machine> load_machine(const char* library);

// "13.0" -> 13000, the encoding of cuDriverGetVersion.
int cuda_version_number(const std::string& text);

}  // namespace fake
