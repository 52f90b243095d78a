// The list grammar NCCL reads NCCL_SOCKET_IFNAME and NCCL_IB_HCA with, read
// as NCCL reads it (NVIDIA/nccl src/misc/utils.cc, parseStringList and
// matchIfList; the leading "^" and "=" as src/os/linux.cc
// ncclOsFindInterfaces and src/transport/net_ib/init.cc ncclIbInitDevices
// strip them):
//   "^" first: the list says what to leave out;
//   "=" (after any "^"): names match exactly, else each entry is a prefix;
//   entries between commas, each "NAME[:PORT[:RAIL[:PLANE]]]"; an empty
//   NAME is skipped; a port that is no number reads as 0 (atoi);
//   at most `max_entries` entries (NCCL's MAX_IFS, MAX_IB_DEVS), each name
//   cut to 63 bytes (netIf.prefix[64]).
// An empty list matches everything (matchIfList's "no user list" case).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

struct NcclNameEntry {
    std::string prefix;
    int port = -1;  // -1: any port
};

struct NcclNameList {
    bool exclude = false;  // "^"
    bool exact = false;    // "="
    std::vector<NcclNameEntry> entries;
    std::string text;      // as given

    // Whether a device (and port; -1 for an interface, which has none) is
    // taken: matchIfList(...) ^ exclude.
    bool takes(std::string_view name, int port = -1) const;
};

// NCCL's MAX_IFS (src/include/socket.h) and MAX_IB_DEVS (net_ib/common.h).
constexpr int kNcclMaxInterfaces = 16;
constexpr int kNcclMaxIbDevices = 32;

NcclNameList parse_nccl_name_list(std::string_view text, int max_entries);

}  // namespace provision::network
