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
    ERROR_UNKNOWN = 999,
};

using Device = struct nvmlDevice_st*;

struct Memory {
    unsigned long long total;  // bytes
    unsigned long long free;
    unsigned long long used;
};

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

}  // namespace provision::nvml
