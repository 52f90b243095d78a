// The container's limits that multi-GPU and data-loading workloads run
// into, read from the real system calls: the size of /dev/shm (statfs),
// the RDMA devices (/sys/class/infiniband) and, only where there are any,
// RLIMIT_MEMLOCK (getrlimit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "health/findings.h"
#include "recipe/pod_recipe.h"

namespace provision {

struct ContainerLimits {
    std::optional<std::uint64_t> shm_bytes;   // empty: /dev/shm is missing (or not a folder), or shm_unlimited
    std::vector<std::string> rdma_devices;    // names under /sys/class/infiniband, sorted
    bool memlock_read = false;                // read only where there are RDMA devices
    std::optional<std::uint64_t> memlock_bytes;  // the soft limit; empty for unlimited
    // /dev/shm is a tmpfs without a size limit (mounted with size=0, or
    // nr_blocks=0: tmpfs(5) "size=0 means no limit") or a ramfs, which has
    // none: their statfs reports 0 blocks, which is no size.
    bool shm_unlimited = false;
};

struct ContainerPaths {
    std::string shm = "/dev/shm";
    std::string infiniband = "/sys/class/infiniband";
};

ContainerLimits read_container_limits(const ContainerPaths& paths = {});

// shm_too_small: /dev/shm missing or under the recipes' floor (never when unlimited).
// memlock_limited: RLIMIT_MEMLOCK below unlimited with RDMA devices.
// Each names the fix for Docker and for Kubernetes.
std::vector<Finding> judge_container(const ContainerLimits& limits, const PodRecipe& recipe,
                                     const HealthPolicy& policy);

// "64 MiB", "1 GiB", "1.5 GiB", "8 KiB".
std::string byte_size_words(std::uint64_t bytes);

}  // namespace provision
