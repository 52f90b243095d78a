// The part of the CUDA driver API (libcuda) that detection uses, declared
// here so that no NVIDIA header is needed to build.  Values and signatures
// follow NVIDIA's cuda.h; the fake library in tests/fake_nvml implements the
// same declarations.
#pragma once

#include <cstddef>
#include <string>

namespace provision::cuda {

enum Result : int {
    SUCCESS = 0,
    ERROR_INVALID_VALUE = 1,
    ERROR_OUT_OF_MEMORY = 2,
    ERROR_NOT_INITIALIZED = 3,
    ERROR_NO_DEVICE = 100,
    ERROR_INVALID_DEVICE = 101,
    ERROR_INSUFFICIENT_DRIVER = 35,
    ERROR_OPERATING_SYSTEM = 304,
    ERROR_SYSTEM_NOT_READY = 802,
    ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    ERROR_UNKNOWN = 999,
};

using Device = int;  // CUdevice

struct Uuid {  // CUuuid
    char bytes[16];
};

enum DeviceAttribute : int {
    ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

using InitFn = Result (*)(unsigned);                                // cuInit
using DriverGetVersionFn = Result (*)(int*);                        // cuDriverGetVersion
using DeviceGetCountFn = Result (*)(int*);                          // cuDeviceGetCount
using DeviceGetFn = Result (*)(Device*, int);                       // cuDeviceGet
using DeviceGetNameFn = Result (*)(char*, int, Device);             // cuDeviceGetName
using DeviceGetUuidFn = Result (*)(Uuid*, Device);                  // cuDeviceGetUuid_v2, cuDeviceGetUuid
using DeviceGetAttributeFn = Result (*)(int*, DeviceAttribute, Device);  // cuDeviceGetAttribute
using DeviceTotalMemFn = Result (*)(std::size_t*, Device);          // cuDeviceTotalMem_v2
using GetErrorStringFn = Result (*)(Result, const char**);          // cuGetErrorString

// "13.0" for the 13000 that cuDriverGetVersion and
// nvmlSystemGetCudaDriverVersion_v2 report (1000 * major + 10 * minor).
inline std::string version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace provision::cuda
