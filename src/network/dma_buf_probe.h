// The probe NCCL makes to learn whether a NIC takes GPU memory through
// dma-buf (NVIDIA/nccl src/transport/net_ib/gdr.cc, ibDmaBufSupportInitOnce):
// open the device, allocate a protection domain, and register a dma-buf
// region with descriptor -1; EOPNOTSUPP or EPROTONOSUPPORT say the kernel or
// the NIC's driver cannot, anything else (EBADF) that it can.  libibverbs is
// opened with dlopen where the image has it; without it the probe is not
// made (NCCL itself could not use the NIC either).
#pragma once

#include <string>
#include <string_view>

namespace provision::network {

enum class ProbeOutcome { supported, unsupported, not_made };
std::string_view to_string(ProbeOutcome outcome);

struct DmaBufProbe {
    ProbeOutcome outcome = ProbeOutcome::not_made;
    std::string detail;  // why not made, or the errno the registration gave
};

// `library`: the libibverbs to open (default libibverbs.so.1); `device`:
// the RDMA device's name ("mlx5_0").
DmaBufProbe probe_dma_buf(const std::string& library, const std::string& device);

}  // namespace provision::network
