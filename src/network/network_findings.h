// The network stage's findings, each a [policy] key (recipe/health_signals.h,
// network_signals) weighed by the recipes:
//   socket_ifname_unmatched  NCCL_SOCKET_IFNAME matches no interface there
//                            (NCCL: "Bootstrap : no socket interface found")
//   bootstrap_interface_down the interface NCCL_SOCKET_IFNAME names is down or
//                            has no address, or no interface at all is up
//   bootstrap_interface_mismatch  NCCL's interface is not the one the kernel
//                            routes MASTER_ADDR through: only then, and only
//                            when the user has not set it,
//                            NCCL_SOCKET_IFNAME=<that interface> is written
//   rdma_devices_hidden      the host has RDMA devices this container cannot
//                            open: NCCL moves to TCP sockets without a word
//   ib_hca_unmatched         NCCL_IB_HCA leaves NCCL no active port
//   rdma_port_init           a port in INIT: no subnet manager has set it up
//   rdma_port_slow           a port NCCL takes runs slower than the others
//   rdma_link_layers_mixed   NCCL would take InfiniBand and RoCE ports at once
//   roce_gid_unusable        the GID NCCL picks on a RoCE port is unset or
//                            link-local (error 12 time-outs); NCCL_IB_GID_INDEX
//                            is never written from a guess
//   gpudirect_unavailable    RDMA without GPUDirect: neither peer memory
//                            (nvidia-peermem) nor dma-buf
//   gpudirect_too_far        a GPU's nearest NIC is beyond NCCL_NET_GDR_LEVEL
//   pcie_acs_redirect        ACS redirects peer traffic on a bridge between a
//                            GPU and its NIC: the likely cause of hangs and IB
//                            completion error 4
#pragma once

#include "network/network_report.h"
#include "network/network_stage.h"
#include "recipe/recipe.h"

namespace provision::network {

void add_network_findings(NetworkReport& report, const NetworkSettings& settings, const HealthPolicy& policy);

}  // namespace provision::network
