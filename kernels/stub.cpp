// Stands in for the CUDA kernels when the project is built without a toolkit.
#include "check_catalog.h"
#include "validation_kernels.h"

namespace provision::kernels {

bool kernels_available() { return false; }

std::string kernel_architectures() { return {}; }

DeviceProbe probe_devices() { return {{}, "provision was built without a CUDA toolkit"}; }

CheckResult run_check(int, const std::string& name, const CheckOptions&) {
    if (auto unknown = detail::reject_unknown_check(name)) return *unknown;
    CheckResult result;
    result.name = name;
    result.status = CheckStatus::unsupported;
    result.detail = "provision was built without a CUDA toolkit";
    return result;
}

}  // namespace provision::kernels
