// Reads the host's GPUs and driver through NVML (libnvidia-ml.so.1), loaded
// with dlopen.  NVML lists every GPU of the host, in its own (PCI bus) order,
// whatever CUDA_VISIBLE_DEVICES says.
#pragma once

#include <chrono>

#include <optional>
#include <string>
#include <vector>

#include "gpu/detect_options.h"  // NvmlAfterReading
#include "gpu/inventory.h"

namespace provision {

struct NvmlGpu {
    Gpu gpu;                       // nvml_index and health set; index not yet meaningful
    bool capability_known = false; // false on drivers without nvmlDeviceGetCudaComputeCapability
    bool readable = true;          // false when a query failed (lost GPU, ...): see the faults
    bool mig_enabled = false;      // MIG mode on: libcuda lists instances, NVML the parent GPU
};

struct NvmlReport {
    bool library_found = false;    // dlopen succeeded
    bool initialised = false;      // nvmlInit_v2 succeeded and the required functions exist
    std::string driver_version;    // "580.159.04"
    std::string cuda_version;      // "13.0"; empty on drivers without nvmlSystemGetCudaDriverVersion_v2
    std::vector<NvmlGpu> gpus;     // every GPU NVML counts, readable or not (NVLinks and PCIe link included)
    HostTopology topology;         // every pair of readable GPUs, by NVML index
    std::vector<std::string> notes;
    bool problem = false;          // the library is there but something failed
    std::vector<DriverFault> faults;  // the failures, by class (each recorded here only, not in `notes`)
    // Set by probe_nvml; false in the stand-in for a probe that did not
    // return within the time limit (a hung driver).
    bool answered = false;
};

// The workload's view of the GPUs, as CUDA reads it.
struct CudaEnvironment {
    std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES
    std::optional<std::string> device_order;     // CUDA_DEVICE_ORDER
};

// Never throws: every failure is a note in the report.  Health signals are
// read with optional functions: one the driver lacks, or that answers
// NVML_ERROR_NOT_SUPPORTED, leaves its signal empty.
// Every GPU's name, UUID, memory, capability and MIG mode are read; its
// health, links, PCIe and fabric only where the workload will see it, when
// NVML can tell which GPUs those are (nvml_stand_in.h; otherwise every GPU's):
// each GPU read costs dozens of driver calls, and the driver serialises them
// with the validation workers' context creation.
// NVML is shut down after the report is read (release_nvml), on a thread of
// its own, or left open (`after`).  The GPUs' PCIe links come from `sysfs` where it has
// them (nvml_topology.h).
NvmlReport probe_nvml(const std::string& library, const CudaEnvironment& workload = {},
                      NvmlAfterReading after = NvmlAfterReading::shut_down, const std::string& sysfs = "/sys");

// Waits, at most `limit`, until every NVML shutdown probe_nvml started has
// ended (releasing a session it kept first): before the process exits or
// hands off to the workload.
void wait_for_nvml_shutdown(std::chrono::milliseconds limit);

// Shuts down, on a thread of its own, the session probe_nvml kept
// (NvmlAfterReading::shut_down keeps it until the copies' link counters are
// read again); nothing when there is none.
void release_nvml();

// Each GPU's link error counters read again (read_link_errors_again), for
// those whose counters NVML gave at start; empty where it cannot read them.
// Its own NVML session, cheap while probe_nvml's is kept.
std::vector<std::optional<LinkErrorCounts>> read_link_errors_again(const std::string& library,
                                                                   const std::vector<Gpu>& gpus);

// The report's faults, with a hang for a probe that never answered.
std::vector<DriverFault> nvml_driver_faults(const NvmlReport& report);

}  // namespace provision
