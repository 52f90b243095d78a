// Stands in for the CUDA kernels when the project is built without a toolkit.
#include "check_catalog.h"
#include "validation_kernels.h"

namespace provision::kernels {
namespace {

constexpr const char* kNoToolkit = "provision was built without a CUDA toolkit";

class Unavailable final : public PreparedCheck {
public:
    explicit Unavailable(CheckResult result) : result_(std::move(result)) {}
    CheckResult run(int) override { return result_; }

private:
    CheckResult result_;
};

}  // namespace

bool kernels_available() { return false; }

std::string kernel_architectures() { return {}; }

DeviceProbe probe_devices() { return {{}, kNoToolkit}; }

OpenedDevice open_device(int) {
    OpenedDevice device;
    device.detail = kNoToolkit;
    return device;
}

std::unique_ptr<PreparedCheck> prepare_check(const std::string& name, const CheckOptions&) {
    if (auto unknown = detail::reject_unknown_check(name)) return std::make_unique<Unavailable>(*unknown);
    CheckResult result;
    result.name = name;
    result.status = CheckStatus::unsupported;
    result.detail = kNoToolkit;
    return std::make_unique<Unavailable>(std::move(result));
}

CheckResult run_check(int cuda_device, const std::string& name, const CheckOptions& options) {
    return prepare_check(name, options)->run(cuda_device);
}

}  // namespace provision::kernels
