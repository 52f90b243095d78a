// Stands in for the CUDA kernels when the project is built without a toolkit.
#include "check_catalog.h"
#include "link_checks.h"
#include "nccl_check.h"
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

namespace {

class UnavailableHostLink final : public HostLinkCheck {
public:
    HostLinkMeasure run(int) override {
        HostLinkMeasure measure;
        measure.detail = kNoToolkit;
        return measure;
    }
};

class UnavailablePull final : public PeerPullCheck {
public:
    PeerPull run(int) override {
        PeerPull pull;
        pull.detail = kNoToolkit;
        return pull;
    }
};

}  // namespace

std::unique_ptr<HostLinkCheck> prepare_host_link(int, std::size_t) { return std::make_unique<UnavailableHostLink>(); }

PeerExport export_peer_buffer(int, int, std::size_t, PeerPath) {
    PeerExport exported;
    exported.detail = kNoToolkit;
    return exported;
}

void release_peer_buffers(int) {}

std::unique_ptr<PeerPullCheck> prepare_pull(int, const PeerSource&, const std::string&) {
    return std::make_unique<UnavailablePull>();
}

NcclUniqueId make_nccl_unique_id(const std::string&) {
    NcclUniqueId id;
    id.detail = kNoToolkit;
    return id;
}

NcclAllReduce run_nccl_all_reduce(int, const std::string&, int, int, const std::string&, std::size_t, int) {
    NcclAllReduce result;
    result.detail = kNoToolkit;
    return result;
}

HostMemoryCheck check_host_numa_memory(int) {
    HostMemoryCheck check;
    check.detail = kNoToolkit;
    return check;
}

}  // namespace provision::kernels
