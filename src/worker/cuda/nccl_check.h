// The full mode's proof of NCCL itself: an all-reduce across the validation
// workers, one communicator rank a worker as torchrun makes them, with the
// workload's own libnccl.so.2 loaded with dlopen (nothing links it).  Rank 0
// makes the unique id; the parent hands it to every rank.  Each rank fills
// its buffer with rank + 1, sums in place, and checks that every element
// holds n (n + 1) / 2.  Host code on the CUDA runtime (built where a toolkit
// is found); its kernels are kernels/buffer_kernels.h's.  Plain C++ types in
// this header.
#pragma once

#include <cstddef>
#include <string>

namespace provision::links {

struct NcclUniqueId {
    bool ok = false;
    std::string id;      // ncclUniqueId's 128 bytes in hex
    std::string detail;  // why not
};
NcclUniqueId make_nccl_unique_id(const std::string& library);

struct NcclAllReduce {
    bool ok = false;         // ran, and every element summed right
    double init_ms = 0;      // ncclCommInitRank, all ranks meeting
    double ms = 0;           // the median of the timed all-reduces
    double bus_gb_per_s = 0; // NCCL's bus bandwidth: 2 (n - 1) / n x bytes / time
    std::string detail;
};
// Joins the communicator and all-reduces `bytes` of float32 `repeats` times
// after one untimed run.  Never throws.
NcclAllReduce run_nccl_all_reduce(int cuda_device, const std::string& library, int ranks, int rank,
                                  const std::string& id, std::size_t bytes, int repeats);

}  // namespace provision::links
