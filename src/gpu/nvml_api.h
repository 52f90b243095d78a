// The part of NVML's C ABI that detection uses, declared here so that no
// NVIDIA header is needed to build.  Values and signatures follow NVIDIA's
// nvml.h (NVML API reference); the fake library in tests/fake_nvml
// implements the same declarations.
#pragma once

namespace provision::nvml {

enum Return : int {
    SUCCESS = 0,
    ERROR_UNINITIALIZED = 1,
    ERROR_INVALID_ARGUMENT = 2,
    ERROR_NOT_SUPPORTED = 3,
    ERROR_NO_PERMISSION = 4,
    ERROR_NOT_FOUND = 6,
    ERROR_INSUFFICIENT_SIZE = 7,
    ERROR_DRIVER_NOT_LOADED = 9,
    ERROR_TIMEOUT = 10,
    ERROR_LIBRARY_NOT_FOUND = 12,
    ERROR_FUNCTION_NOT_FOUND = 13,
    ERROR_GPU_IS_LOST = 15,
    ERROR_RESET_REQUIRED = 16,
    ERROR_OPERATING_SYSTEM = 17,
    ERROR_LIB_RM_VERSION_MISMATCH = 18,
    ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    ERROR_UNKNOWN = 999,
};

using Device = struct nvmlDevice_st*;

struct Memory {
    unsigned long long total;  // bytes
    unsigned long long free;
    unsigned long long used;
};

// nvmlMemory_v2_t: `used` leaves out what the driver reserves.
struct Memory2 {
    unsigned version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): the struct's size and the version in the top byte.
inline constexpr unsigned memory_v2_version = static_cast<unsigned>(sizeof(Memory2)) | (2u << 24);

// Arguments of the health queries (nvmlMemoryErrorType_t, nvmlEccCounterType_t, ...).
inline constexpr int memory_error_uncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int ecc_counter_volatile = 0;      // NVML_VOLATILE_ECC
inline constexpr int feature_enabled = 1;           // NVML_FEATURE_ENABLED, NVML_DEVICE_MIG_ENABLE

// nvmlClocksEventReasons (formerly nvmlClocksThrottleReasons) bits.
inline constexpr unsigned long long clocks_event_hw_slowdown = 0x8;
inline constexpr unsigned long long clocks_event_sw_thermal = 0x20;
inline constexpr unsigned long long clocks_event_hw_thermal = 0x40;
inline constexpr unsigned long long clocks_event_hw_power_brake = 0x80;

// Buffer sizes from nvml.h (the _V2 sizes, large enough for every driver).
inline constexpr unsigned name_buffer_size = 96;
inline constexpr unsigned uuid_buffer_size = 96;
inline constexpr unsigned driver_version_buffer_size = 80;

using InitFn = Return (*)();                                        // nvmlInit_v2
using ShutdownFn = Return (*)();                                    // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                      // nvmlErrorString
using SystemGetDriverVersionFn = Return (*)(char*, unsigned);       // nvmlSystemGetDriverVersion
using SystemGetCudaDriverVersionFn = Return (*)(int*);              // nvmlSystemGetCudaDriverVersion_v2
using DeviceGetCountFn = Return (*)(unsigned*);                     // nvmlDeviceGetCount_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned, Device*);     // nvmlDeviceGetHandleByIndex_v2
using DeviceGetNameFn = Return (*)(Device, char*, unsigned);        // nvmlDeviceGetName
using DeviceGetUuidFn = Return (*)(Device, char*, unsigned);        // nvmlDeviceGetUUID
using DeviceGetCudaComputeCapabilityFn = Return (*)(Device, int*, int*);  // nvmlDeviceGetCudaComputeCapability
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);          // nvmlDeviceGetMemoryInfo

// Optional: each may be missing from an older driver, or answer
// ERROR_NOT_SUPPORTED on a GPU without the feature.
using DeviceGetMemoryInfoV2Fn = Return (*)(Device, Memory2*);                   // nvmlDeviceGetMemoryInfo_v2
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);  // nvmlDeviceGetTotalEccErrors
using DeviceGetRetiredPagesPendingStatusFn = Return (*)(Device, int*);           // nvmlDeviceGetRetiredPagesPendingStatus
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned*, unsigned*, unsigned*, unsigned*);  // nvmlDeviceGetRemappedRows
using DeviceGetClocksEventReasonsFn = Return (*)(Device, unsigned long long*);  // nvmlDeviceGetCurrentClocksEventReasons
// nvmlDeviceGetComputeRunningProcesses(_v3): called with a count of 0 and no
// buffer it only counts.  The _v2 and _v3 calls fill nvmlProcessInfo_t
// (nvml.h: pid, usedGpuMemory, gpuInstanceId, computeInstanceId); the first
// call's nvmlProcessInfo_v1_t lacks the last two, so only those two list.
using DeviceGetComputeRunningProcessesFn = Return (*)(Device, unsigned*, void*);
struct ProcessInfo {
    unsigned pid;
    unsigned long long used_gpu_memory;  // bytes, or value_not_available
    unsigned gpu_instance_id;
    unsigned compute_instance_id;
};
// NVML_VALUE_NOT_AVAILABLE: usedGpuMemory where the driver cannot tell
// (Windows WDDM, some containers).
constexpr unsigned long long value_not_available = ~0ULL;
using DeviceGetMigModeFn = Return (*)(Device, unsigned*, unsigned*);           // nvmlDeviceGetMigMode
// nvmlComputeMode_t: DEFAULT 0, EXCLUSIVE_THREAD 1 (deprecated), PROHIBITED 2, EXCLUSIVE_PROCESS 3.
using DeviceGetComputeModeFn = Return (*)(Device, int*);                        // nvmlDeviceGetComputeMode

// The signals DCGM's health watches read (NVIDIA/DCGM modules/health/
// DcgmHealthWatch.cpp), all optional.
// nvmlFieldValue_t; nvmlValue_t is a union of 8 bytes.
struct FieldValue {
    unsigned field_id;
    unsigned scope_id;       // the NVLink, for the per-link fields
    long long timestamp;
    long long latency_usec;
    int value_type;          // nvmlValueType_t
    Return nvml_return;      // the field's own answer: value is set only on SUCCESS
    union {
        double d;
        int si;
        unsigned ui;
        unsigned long ul;
        unsigned long long ull;
        long long sll;
        unsigned short us;
    } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
// nvmlValueType_t of `value`.
inline constexpr int value_type_double = 0;
inline constexpr int value_type_unsigned_int = 1;
inline constexpr int value_type_unsigned_long = 2;
inline constexpr int value_type_unsigned_long_long = 3;
inline constexpr int value_type_signed_long_long = 4;
inline constexpr int value_type_signed_int = 5;
inline constexpr int value_type_unsigned_short = 6;
// Field ids (nvml.h NVML_FI_*).
inline constexpr unsigned field_gpu_recovery_action = 230;           // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
inline constexpr unsigned field_nvlink_recovery_successful = 213;   // ..._COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS
inline constexpr unsigned field_nvlink_recovery_failed = 214;       // ..._COUNT_LINK_RECOVERY_FAILED_EVENTS
inline constexpr unsigned field_nvlink_recovery_events = 215;       // ..._COUNT_LINK_RECOVERY_EVENTS
inline constexpr unsigned field_nvlink_symbol_errors = 221;         // NVML_FI_DEV_NVLINK_COUNT_SYMBOL_ERRORS
// The data-link counters summed over a GPU's links, as DCGM reads them
// (DCGM_FI_DEV_NVLINK_{REPLAY,RECOVERY,CRC_ERROR}_TOTAL: NVIDIA/DCGM
// dcgmlib/src/dcgm_fields.cpp; the numbers in sdk/nvidia/nvml/dcgm_nvml.h),
// scopeId 0, or UINT_MAX from NVLink 5 (Blackwell) on (DcgmCacheManager.cpp).
inline constexpr unsigned field_nvlink_replay_total = 161;          // NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY
inline constexpr unsigned field_nvlink_recovery_total = 162;        // NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY
inline constexpr unsigned field_nvlink_crc_total = 163;             // NVML_FI_DEV_NVLINK_ERROR_DL_CRC
// nvmlNvLinkErrorCounter_t.
inline constexpr int nvlink_error_dl_replay = 0;
inline constexpr int nvlink_error_dl_recovery = 1;
inline constexpr int nvlink_error_dl_crc_flit = 2;
inline constexpr int nvlink_error_dl_crc_data = 3;
// nvmlPageRetirementCause_t.
inline constexpr int page_retirement_multiple_single_bit = 0;
inline constexpr int page_retirement_double_bit = 1;
using DeviceGetFieldValuesFn = Return (*)(Device, int, FieldValue*);                       // nvmlDeviceGetFieldValues
using DeviceGetRetiredPagesFn = Return (*)(Device, int, unsigned*, unsigned long long*);  // nvmlDeviceGetRetiredPages
using DeviceGetNvLinkErrorCounterFn = Return (*)(Device, unsigned, int, unsigned long long*);  // nvmlDeviceGetNvLinkErrorCounter
using DeviceGetPcieReplayCounterFn = Return (*)(Device, unsigned*);                       // nvmlDeviceGetPcieReplayCounter

// Xid events, for a watcher between rounds (gpu/xid_events.h).  Events
// that happened before a device was registered are never delivered.
using EventSet = struct nvmlEventSet_st*;
struct EventData {                      // nvmlEventData_t
    Device device;
    unsigned long long event_type;
    unsigned long long event_data;      // the Xid, for an Xid event
    unsigned gpu_instance_id;
    unsigned compute_instance_id;
};
inline constexpr unsigned long long event_type_xid_critical_error = 0x8;  // nvmlEventTypeXidCriticalError
using EventSetCreateFn = Return (*)(EventSet*);                                      // nvmlEventSetCreate
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);    // nvmlDeviceRegisterEvents
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned);                  // nvmlEventSetWait_v2
using EventSetFreeFn = Return (*)(EventSet);                                         // nvmlEventSetFree

// Topology, all optional.  nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 and
// nvmlDeviceGetNvLinkRemotePciInfo_v2 fill it.
struct PciInfo {
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id;
    unsigned pci_subsystem_id;
    char bus_id[32];
};

// nvmlGpuFabricInfo_t (v1, nvmlDeviceGetGpuFabricInfo) and
// nvmlGpuFabricInfo_v2_t (nvmlDeviceGetGpuFabricInfoV with version
// 0x02000024); state: NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0, NOT_STARTED 1,
// IN_PROGRESS 2, COMPLETED 3.
struct GpuFabricInfo {
    unsigned char cluster_uuid[16];
    int status;
    unsigned clique_id;
    unsigned char state;
};
struct GpuFabricInfoV2 {
    unsigned version;
    unsigned char cluster_uuid[16];
    int status;
    unsigned clique_id;
    unsigned char state;
    unsigned health_mask;
};
// v3 adds healthSummary (NVML_GPU_FABRIC_HEALTH_SUMMARY_*: NOT_SUPPORTED 0,
// HEALTHY 1, UNHEALTHY 2, LIMITED_CAPACITY 3).
struct GpuFabricInfoV3 {
    unsigned version;
    unsigned char cluster_uuid[16];
    int status;
    unsigned clique_id;
    unsigned char state;
    unsigned health_mask;
    unsigned char health_summary;
};
// nvmlGpuFabricInfo_v4_t (nvmlDeviceGetGpuFabricInfo_v4, R610 headers): no
// version field; cliqueId becomes cliques[] by type (NVML_GPU_FABRIC_CLIQUE_TYPE_*:
// POINTER_UC 0, POINTER_MC 1, HANDLE_UC 2, HANDLE_MC 3, HANDLE_MC_PUSH 4).
inline constexpr unsigned gpu_fabric_clique_max = 64;  // NVML_GPU_FABRIC_CLIQUE_MAX
struct GpuFabricClique {
    unsigned char type;
    unsigned id;
};
struct GpuFabricInfoV4 {
    unsigned char cluster_uuid[16];
    int status;
    GpuFabricClique cliques[gpu_fabric_clique_max];
    unsigned num_cliques;
    unsigned char state;
    unsigned health_mask;
    unsigned char health_summary;
};
static_assert(sizeof(GpuFabricInfo) == 28 && sizeof(GpuFabricInfoV2) == 36 && sizeof(GpuFabricInfoV3) == 40 &&
                  sizeof(GpuFabricInfoV4) == 548,
              "NVML's fabric info layouts");
inline constexpr unsigned gpu_fabric_info_v2 = sizeof(GpuFabricInfoV2) | (2u << 24);
inline constexpr unsigned gpu_fabric_info_v3 = sizeof(GpuFabricInfoV3) | (3u << 24);
using DeviceGetGpuFabricInfoFn = Return (*)(Device, GpuFabricInfo*);      // nvmlDeviceGetGpuFabricInfo
using DeviceGetGpuFabricInfoVFn = Return (*)(Device, void*);              // nvmlDeviceGetGpuFabricInfoV (v2, v3)
using DeviceGetGpuFabricInfoV4Fn = Return (*)(Device, GpuFabricInfoV4*);  // nvmlDeviceGetGpuFabricInfo_v4

// nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t.
inline constexpr int p2p_caps_read = 0;
inline constexpr int p2p_caps_write = 1;
inline constexpr int p2p_caps_nvlink = 2;
enum P2PStatus : int {
    P2P_STATUS_OK = 0,
    P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
    P2P_STATUS_GPU_NOT_SUPPORTED = 2,
    P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
    P2P_STATUS_DISABLED_BY_REGKEY = 4,
    P2P_STATUS_NOT_SUPPORTED = 5,
    P2P_STATUS_UNKNOWN = 6,
};

// nvmlGpuTopologyLevel_t.
enum TopologyLevel : int {
    TOPOLOGY_INTERNAL = 0,
    TOPOLOGY_SINGLE = 10,      // PIX
    TOPOLOGY_MULTIPLE = 20,    // PXB
    TOPOLOGY_HOSTBRIDGE = 30,  // PHB
    TOPOLOGY_NODE = 40,        // NODE
    TOPOLOGY_SYSTEM = 50,      // SYS
};

// nvmlIntNvLinkDeviceType_t.
inline constexpr int nvlink_device_gpu = 0;
inline constexpr int nvlink_device_switch = 2;

// NVML_NVLINK_MAX_LINKS grew from 12 to 18 to 36 (CUDA 13.3's header): the
// probe asks every index up to this and stops where the driver says the
// index is invalid.
inline constexpr unsigned nvlink_index_limit = 36;

using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);                          // nvmlDeviceGetPciInfo_v3
using DeviceGetP2PStatusFn = Return (*)(Device, Device, int, int*);                // nvmlDeviceGetP2PStatus
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, int*);      // nvmlDeviceGetTopologyCommonAncestor
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned, unsigned*);          // nvmlDeviceGetNvLinkState
using DeviceGetNvLinkVersionFn = Return (*)(Device, unsigned, unsigned*);        // nvmlDeviceGetNvLinkVersion
using DeviceGetNvLinkRemotePciInfoFn = Return (*)(Device, unsigned, PciInfo*);   // nvmlDeviceGetNvLinkRemotePciInfo_v2
using DeviceGetNvLinkRemoteDeviceTypeFn = Return (*)(Device, unsigned, int*);    // nvmlDeviceGetNvLinkRemoteDeviceType
using DeviceGetPcieLinkFn = Return (*)(Device, unsigned*);  // nvmlDeviceGet{Curr,Max}PcieLink{Generation,Width}

}  // namespace provision::nvml
