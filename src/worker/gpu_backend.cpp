#include "worker/gpu_backend.h"

#include "kernels/fault_injection.h"

namespace provision {

std::unique_ptr<GpuBackend> make_gpu_backend(int cuda_device, bool simulate, const std::string& cuda_library) {
    if constexpr (kFaultInjection)
        if (simulate) return make_simulated_backend(cuda_device, cuda_library);
    return make_cuda_backend(cuda_device);
}

}  // namespace provision
