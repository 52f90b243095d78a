// What the workload's NCCL will do with memory between its ranks, by NCCL's
// own rules (NVIDIA/nccl src/misc/cudawrap.cc, ncclCuMemEnable and
// ncclCuMemHostEnable; src/transport/p2p.cc; src/transport/shm.cc), so that
// the copy check proves the path the workload will take:
//
// Peer memory: cuMem with a POSIX file descriptor ("P2P/CUMEM") when
//   NCCL_CUMEM_ENABLE, read as NCCL reads it (strtoll, base 0: text that is
//   no number is 0, unset or empty is the default), is a number > 0; or is
//   the default (-2, "auto") and NCCL is 2.19.1 or newer and the driver's
//   CUDA is 12.0 or newer (NCCL's support check also asks the GPU for
//   virtual memory management, which every GPU since Pascal has).  NCCL
//   2.18 took it only when asked; before 2.18 there was no cuMem path.
//   Otherwise legacy IPC ("P2P/IPC").
// Host memory (the SHM transport's buffers): cuMem at the GPU's host NUMA
//   node when peer memory is cuMem too, NCCL is 2.23 or newer, built for
//   CUDA 12.2 or newer, the driver's CUDA is 12.2 or newer, and
//   NCCL_CUMEM_HOST_ENABLE is > 0, or is the default (-1) and NCCL is 2.24 or
//   newer and the driver's CUDA is 12.6 or newer.  From 2.26.3 NCCL tries
//   one such allocation at start and falls back to /dev/shm by itself when
//   it fails; before, the failure stops the job (CUDA error 217 in shm.cc).
// A version that does not read as one (nccl/nccl_version.h) is unknown, and
// no rule that needs a number is taken for it: legacy IPC and /dev/shm are
// checked unless NCCL_CUMEM_ENABLE asks for cuMem.  Every value a reason
// holds (the version, the variables' text) is echoed (core/text.h).
#pragma once

#include <optional>
#include <string>

#include "gpu/copy_check.h"
#include "nccl/nccl_library.h"

namespace provision {

struct NcclPaths {
    PeerPath peer = PeerPath::legacy_ipc;
    std::string peer_why;                   // in words, for --explain
    bool cumem_host = false;                // host buffers from cuMem at the host NUMA node
    std::string host_why;
    bool falls_back_from_cumem_host = false;  // NCCL >= 2.26.3: a failing cuMem host allocation is survived
};

// `cumem_enable` and `cumem_host_enable`: NCCL_CUMEM_ENABLE and
// NCCL_CUMEM_HOST_ENABLE as the workload gets them; `driver_cuda`: the
// driver's CUDA version, 1000 * major + 10 * minor (0 when unknown).
NcclPaths nccl_paths(const std::optional<NcclLibrary>& nccl, const std::optional<std::string>& cumem_enable,
                     const std::optional<std::string>& cumem_host_enable, int driver_cuda);

// "12.2" -> 12020, as cuDriverGetVersion counts; 0 for "" or what is no version.
int cuda_number(const std::string& text);

// NCCL_*'s value as NCCL's parameters read it: nullopt for the default
// (unset, empty, out of range), else strtoll with base 0 (0 for text that
// is no number).
std::optional<long long> nccl_parameter(const std::optional<std::string>& value);

}  // namespace provision
