// Stands in for the CUDA kernels when the project is built without a toolkit.
#include "validation_kernels.h"

namespace provision::kernels {

bool kernels_available() { return false; }

DeviceProbe probe_devices() { return {{}, "provision was built without a CUDA toolkit"}; }

std::vector<std::string> check_names() {
    return {"attention.fp16", "attention.bf16", "attention.bf16.wgmma", "gemm.tf32"};
}

CheckResult run_check(int, const std::string& name, const CheckOptions&) {
    CheckResult result;
    result.name = name;
    result.status = CheckStatus::unsupported;
    result.detail = "provision was built without a CUDA toolkit";
    return result;
}

}  // namespace provision::kernels
