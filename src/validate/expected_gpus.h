// The GPUs a workload will see, as far as can be told before NVML answers:
// what a worker must be started for at the very start of a run, so that
// every GPU's CUDA context is created beside the rest of the run.
//
// CUDA_VISIBLE_DEVICES's entries, read with CUDA's rules as far as they
// can be without the driver (gpu/visible_devices.h): entries in order up to
// the first that cannot name a GPU (empty, or neither an index nor a UUID);
// a list with a MIG instance, its first entry alone (CUDA opens one MIG
// instance a process).  Unset: CUDA's devices 0, 1, ... one per GPU device
// node (/dev/nvidiaN, what the container runtime mounts for each GPU it
// hands over).  Never more than there are device nodes.  Detection later
// confirms each GPU or not; a worker started for a GPU it does not confirm
// is stopped.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace provision {

// The CUDA_VISIBLE_DEVICES value of each expected GPU's worker, in the
// workload's order: entry i opens the GPU the workload calls i.
std::vector<std::string> expected_gpu_entries(const std::optional<std::string>& cuda_visible_devices,
                                              int gpu_device_nodes);

// The number of /dev/nvidiaN nodes in `dev` (the GPUs' device nodes).
int count_gpu_device_nodes(const std::string& dev = "/dev");

}  // namespace provision
