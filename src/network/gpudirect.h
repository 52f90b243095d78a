// GPUDirect RDMA as NCCL's IB transport decides it, from files:
//   peer memory (NVIDIA/nccl src/transport/net_ib/gdr.cc,
//   ibGdrSupportInitOnce): any of /sys/kernel/mm/memory_peers/nv_mem/version,
//   /sys/kernel/mm/memory_peers/nv_mem_nc/version,
//   /sys/module/nvidia_peermem/version exists;
//   dma-buf (src/init.cc dmaBufSupported, gdr.cc ibDmaBufSupportInitOnce):
//   NCCL_DMABUF_ENABLE not 0, the GPU's CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
//   and the NIC's ibv_reg_dmabuf_mr (dma_buf_probe.h).  The GPU attribute
//   needs a CUDA context, which the parent never makes: it stands on what
//   decides it, the kernel (dma-buf import into RDMA drivers from Linux 5.12,
//   /proc/sys/kernel/osrelease) and NVIDIA's open kernel modules (the
//   proprietary ones export no dma-buf; /proc/driver/nvidia/version names
//   which is loaded).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace provision::network {

enum class PeerMemory { none, nv_mem, nv_mem_nc, nvidia_peermem };
std::string_view to_string(PeerMemory memory);

// The first of gdr.cc's three files that exists under `sysfs`.
PeerMemory read_peer_memory(const std::string& sysfs);

struct DmaBufFacts {
    bool enabled = true;                   // NCCL_DMABUF_ENABLE not 0
    std::string kernel_release;            // "6.8.0-45-generic"; "" unread
    std::optional<bool> kernel_new_enough; // 5.12 or newer
    std::optional<bool> open_kernel_module;  // NVIDIA's open GPU kernel module is loaded
};

// `proc`: where /proc is.
DmaBufFacts read_dma_buf_facts(const std::string& proc, const std::optional<std::string>& dmabuf_enable);

// "5.15.0-105-generic" -> {5, 15}; nullopt for anything else.
std::optional<std::pair<int, int>> kernel_version_of(std::string_view release);

}  // namespace provision::network
