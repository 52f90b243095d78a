// The workload's NCCL against what the copy check found on its paths
// (nccl/nccl_paths.h says which it takes):
//   cumem_p2p_failed   a pair's memory could not be shared through cuMem, and
//                      legacy IPC worked: NCCL_CUMEM_ENABLE=0 makes NCCL take it
//   cumem_host_failed  host memory from cuMem at a GPU's host NUMA node failed:
//                      NCCL_CUMEM_HOST_ENABLE=0 makes NCCL use /dev/shm (named:
//                      a seccomp profile refusing get_mempolicy, Docker's
//                      default without --cap-add SYS_NICE)
//   nccl_driver_too_old  NCCL was built for a newer CUDA than the driver runs
//   nccl_all_reduce_failed  --validate=full: NCCL itself could not all-reduce
//                      across the workers (an error, a hang, a wrong sum)
// A variable the user set keeps its value (workload_env/user_values.h): the
// finding says which value stays.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload_env/user_values.h"
#include "gpu/copy_check.h"
#include "gpu/inventory.h"
#include "health/findings.h"
#include "nccl/nccl_library.h"
#include "nccl/nccl_paths.h"
#include "pod/host_facts.h"

namespace provision {

struct NcclJudgement {
    std::vector<Finding> findings;
    std::vector<UserDecision> settings;  // NCCL_CUMEM_ENABLE=0, NCCL_CUMEM_HOST_ENABLE=0: written or kept
};

NcclJudgement judge_nccl(const std::optional<NcclLibrary>& nccl, const NcclPaths& paths, const Inventory& inventory,
                         const CopyChecks& checks, const HostFacts& host, const HealthPolicy& policy,
                         const UserValues& users);

}  // namespace provision
