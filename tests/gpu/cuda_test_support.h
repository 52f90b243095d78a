// Shared by the GPU tests that launch kernels themselves (they need the
// CUDA headers): the device made current on the test's thread.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

#include "cuda_support.h"
#include "gpu_test_support.h"

namespace provision::gpu_tests {

// The first CUDA device, current on this thread; without one, prints why
// the test is skipped.
inline std::optional<kernels::DeviceInfo> current_device_or_skip() {
    auto device = device_or_skip();
    if (!device) return device;
    (void)cudaGetLastError();  // an earlier test's deliberate bad device index
    kernels::detail::check_cuda(cudaSetDevice(device->index), "cudaSetDevice");
    return device;
}

}  // namespace provision::gpu_tests
