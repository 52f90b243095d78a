// The GID index NCCL's IB transport takes on a port, by NCCL's own rule
// (NVIDIA/nccl src/transport/net_ib/connect.cc, ncclIbGetGidIndex and
// ncclUpdateGidIndex), over the port's GID table as sysfs shows it
// (/sys/class/infiniband/<dev>/ports/<p>/gids/<i>, the RoCE version in
// gid_attrs/types/<i>):
//   InfiniBand: index NCCL_IB_ROUTABLE_FLID_GID_INDEX (1) where that GID
//   carries a routable FLID (bytes 4-5 not zero), else 0.
//   RoCE: NCCL_IB_GID_INDEX where set; else start at 0 and walk the table:
//   a candidate of NCCL_IB_ADDR_FAMILY (AF_INET unless "AF_INET6"; an IPv4
//   GID is an IPv4-mapped address) in NCCL_IB_ADDR_RANGE replaces the
//   current one when the current is of the other family; otherwise only a
//   valid candidate (configured, not link-local fe80::/64) of RoCE version
//   NCCL_IB_ROCE_VERSION_NUM (2) replaces a current one of another version
//   or that is not valid.  A types file that cannot be read (EINVAL in
//   containers, ncclIbRoceGetVersionNum) is version unknown.
// The index is reported, never written: NCCL_IB_GID_INDEX comes only from
// the user.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace provision::network {

using Gid = std::array<std::uint8_t, 16>;

// "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f" (sysfs' form) -> bytes.
std::optional<Gid> parse_gid(std::string_view text);
std::string gid_words(const Gid& gid);  // "::ffff:10.0.0.5", "fe80::a1b:2cff:fe3d:4e5f"

bool gid_configured(const Gid& gid);  // configuredGid: not all zero, not fe80:: alone
bool gid_link_local(const Gid& gid);  // linkLocalGid: fe80::/64
bool gid_valid(const Gid& gid);       // validGid
bool gid_is_ipv4(const Gid& gid);     // getGidAddrFamily: IPv4-mapped (or its multicast form)

// NCCL's variables for the choice, as the environment gives them.
struct GidVariables {
    std::optional<std::string> gid_index;        // NCCL_IB_GID_INDEX
    std::optional<std::string> addr_family;      // NCCL_IB_ADDR_FAMILY
    std::optional<std::string> addr_range;       // NCCL_IB_ADDR_RANGE ("10.0.0.0/16")
    std::optional<std::string> roce_version;     // NCCL_IB_ROCE_VERSION_NUM
    std::optional<std::string> routable_flid_index;  // NCCL_IB_ROUTABLE_FLID_GID_INDEX
};

struct GidChoice {
    int index = 0;
    bool from_user = false;          // NCCL_IB_GID_INDEX set
    std::optional<Gid> gid;          // the GID at that index, where the table has it
    std::optional<int> roce_version; // 1, 2, or unknown
};

// `table`: the GIDs in index order (nullopt: an entry that could not be
// read, which NCCL's ibv_query_gid would fail on; treated as all zero).
// `roce_version(i)`: gid_attrs/types/<i> read on demand (nullopt: unknown).
GidChoice nccl_gid_choice(bool infiniband, const std::vector<std::optional<Gid>>& table,
                          const std::function<std::optional<int>(int)>& roce_version, const GidVariables& variables);

// "RoCE v2" -> 2, "IB/RoCE v1" or "RoCE v1" -> 1 (ncclIbRoceGetVersionNum's prefixes).
std::optional<int> roce_version_of(std::string_view text);

}  // namespace provision::network
