// The test-only stand-in for the kernels (fault-injection builds): the
// worker opens its GPU through the CUDA driver library alone — in the tests
// the fake libcuda of tests/fake_nvml, which can be slow to create a
// context or fail — and acts the checks out: a check in the GPU's range
// passes, others are unsupported, and the planted faults act as the real
// checks' do.  So every path of the worker and its parent runs in CI,
// where no GPU is.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cumem_sharing.h"
#include "validation_kernels.h"

namespace provision {

class SimulatedDevice {
public:
    // `library`: the CUDA driver library to load (the fake one in tests).
    explicit SimulatedDevice(const std::string& library);
    ~SimulatedDevice();
    SimulatedDevice(const SimulatedDevice&) = delete;
    SimulatedDevice& operator=(const SimulatedDevice&) = delete;

    // cuInit, the device at `cuda_device`, its primary context: through the
    // library.  Never throws.
    kernels::OpenedDevice open(int cuda_device);

    // The acted-out result of `name` under `fault` ("" or "wrong-result",
    // "hang"), on the device open() found.
    kernels::CheckResult run(const std::string& name, const std::string& fault) const;

    // The library's cuMem calls (after open()), for sharing memory and
    // allocating host NUMA memory as the real worker does.
    const kernels::cumem::Driver& cumem_driver() const;
    // Exports a legacy IPC handle (cuIpcGetMemHandle) / opens and closes a
    // peer's (cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle): nullopt, or the
    // failed call.
    std::optional<kernels::cumem::Failure> export_legacy_handle() const;
    std::optional<kernels::cumem::Failure> open_legacy_handle() const;

private:
    struct Driver;
    std::unique_ptr<Driver> driver_;
    int major_ = 0;
    int minor_ = 0;
};

}  // namespace provision
