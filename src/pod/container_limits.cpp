#include "pod/container_limits.h"

#include <algorithm>
#include <filesystem>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <fmt/format.h>

namespace provision {

namespace {

// Filesystems whose statfs reports 0 blocks for "no limit" (linux/magic.h):
// tmpfs mounted with size=0 or nr_blocks=0 (shmem_statfs fills the blocks
// only where there is a limit), and ramfs, which has none.
constexpr unsigned long kTmpfsMagic = 0x01021994;
constexpr unsigned long kRamfsMagic = 0x858458f6;

// /dev/shm's size, or that it has no limit; nothing when it is missing.
void read_shm(const std::string& path, ContainerLimits& limits) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return;
    struct statfs fs {};
    if (::statfs(path.c_str(), &fs) != 0) return;
    const auto type = static_cast<unsigned long>(fs.f_type);
    if (fs.f_blocks == 0 && (type == kTmpfsMagic || type == kRamfsMagic)) {
        limits.shm_unlimited = true;
        return;
    }
    limits.shm_bytes = static_cast<std::uint64_t>(fs.f_blocks) * static_cast<std::uint64_t>(fs.f_frsize);
}

std::vector<std::string> entries_of(const std::string& folder) {
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

std::string byte_size_words(std::uint64_t bytes) {
    static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    if (unit == 0) return fmt::format("{} bytes", bytes);
    return value == static_cast<double>(static_cast<std::uint64_t>(value))
               ? fmt::format("{} {}", static_cast<std::uint64_t>(value), units[unit])
               : fmt::format("{:.1f} {}", value, units[unit]);
}

ContainerLimits read_container_limits(const ContainerPaths& paths) {
    ContainerLimits limits;
    read_shm(paths.shm, limits);
    limits.rdma_devices = entries_of(paths.infiniband);
    if (!limits.rdma_devices.empty()) {
        struct rlimit limit {};
        if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
            limits.memlock_read = true;
            if (limit.rlim_cur != RLIM_INFINITY) limits.memlock_bytes = static_cast<std::uint64_t>(limit.rlim_cur);
        }
    }
    return limits;
}

std::vector<Finding> judge_container(const ContainerLimits& limits, const PodRecipe& recipe,
                                     const HealthPolicy& policy) {
    std::vector<Finding> findings;
    const std::string fix_shm =
        "start the container with --shm-size=1g or --ipc=host (Docker), or mount an emptyDir with medium: Memory at "
        "/dev/shm (Kubernetes)";
    const std::string harm =
        "PyTorch's DataLoader workers die with \"bus error\" and NCCL with \"Error while creating shared memory "
        "segment\"";
    if (limits.shm_unlimited) {
        // No limit of its own: the container's memory bounds it, as it bounds everything else.
    } else if (!limits.shm_bytes) {
        findings.push_back({-1, -1, "shm_too_small", policy.level("shm_too_small"),
                            fmt::format("this container has no /dev/shm: {}; {}", harm, fix_shm)});
    } else if (*limits.shm_bytes < recipe.shm_min_bytes) {
        findings.push_back({-1, -1, "shm_too_small", policy.level("shm_too_small"),
                            fmt::format("/dev/shm holds {}, under the {} the recipes ask for ([pod] shm_min_mib): {}; {}",
                                        byte_size_words(*limits.shm_bytes), byte_size_words(recipe.shm_min_bytes), harm,
                                        fix_shm)});
    }
    if (limits.memlock_read && limits.memlock_bytes)
        findings.push_back(
            {-1, -1, "memlock_limited", policy.level("memlock_limited"),
             fmt::format("RLIMIT_MEMLOCK is {} with RDMA devices present ({}): NCCL cannot register its buffers for "
                         "InfiniBand or RoCE (\"ibv_reg_mr ... Cannot allocate memory\"); start the container with "
                         "--ulimit memlock=-1 (Docker), or set LimitMEMLOCK=infinity for the container runtime "
                         "(Kubernetes nodes: containerd's service)",
                         byte_size_words(*limits.memlock_bytes), fmt::join(limits.rdma_devices, ", "))});
    return findings;
}

}  // namespace provision
