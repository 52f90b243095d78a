// What the detect stage found: the driver and the GPUs the workload will see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace provision {

struct ComputeCapability {
    int major = 0;
    int minor = 0;

    // "9.0" -> {9, 0}; std::nullopt when the text is not MAJOR.MINOR.
    static std::optional<ComputeCapability> parse(const std::string& text);
    std::string str() const;
    auto operator<=>(const ComputeCapability&) const = default;
};

struct Gpu {
    int index = 0;               // index as the workload will see it (CUDA order)
    int nvml_index = -1;         // NVML's index on the host, -1 when unknown
    std::string name;
    std::string uuid;            // "GPU-..."; may be empty for fixtures
    ComputeCapability compute_capability;
    std::uint64_t memory_mib = 0;
    std::string architecture;    // filled by classify; empty until then
};

struct Driver {
    bool present = false;
    std::string version;         // as NVML reports it, e.g. "580.159.04"
    std::string cuda;            // highest CUDA version it supports, e.g. "13.0"
};

enum class InventorySource { fixture, driver, none };

struct Inventory {
    InventorySource source = InventorySource::none;
    Driver driver;
    std::vector<Gpu> gpus;       // only the GPUs the workload will see
    int hidden_gpus = 0;         // GPUs on the host hidden by CUDA_VISIBLE_DEVICES
    std::vector<std::string> notes;  // what a user should know (library missing, ...)
    bool driver_problem = false;     // an NVIDIA library is there but failed: GPUs may be missing (see notes)

    bool simulated() const { return source == InventorySource::fixture; }
};

}  // namespace provision
