// The IP interfaces NCCL takes, chosen as NCCL chooses them, from the same
// list (getifaddrs) and the same variables:
//   NVIDIA/nccl src/misc/socket.cc ncclFindInterfaces: NCCL_SOCKET_IFNAME
//   (when longer than one character) decides alone; otherwise "ib" first,
//   then the interface in NCCL_COMM_ID's subnet, then anything but docker,
//   lo and virbr ("^docker,lo,virbr"), then docker, then lo, then virbr;
//   ncclEnvSocketFamily: NCCL_SOCKET_FAMILY "AF_INET" or "AF_INET6" (any
//   other text: either family).
//   src/os/linux.cc ncclOsFindInterfaces: only IPv4 and IPv6 entries of
//   interfaces that are IFF_RUNNING, of the family asked for, no IPv6
//   loopback, matching the list (nccl_name_list.h), each name once, in
//   getifaddrs' order, at most MAX_IFS (16).
//   src/os/linux.cc ncclFindInterfaceMatchSubnet: the first entry of the
//   remote address's family whose address and netmask put it in the
//   remote's subnet (IPv6: the same scope too); running or not.
//   src/bootstrap.cc bootstrapNetInit: the bootstrap takes the first
//   interface of ncclFindInterfaces, or with NCCL_COMM_ID set, the one in
//   its subnet.  NET/Socket (src/transport/net_socket.cc) takes all of
//   them ("NET/Socket : Using [0]eth0:..."), NET/IB one for its
//   out-of-band exchange (net_ib/init.cc: "No IP interface found" without).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "network/interfaces.h"

namespace provision::network {

// NCCL's own variables for its sockets, as the environment gives them.
struct NcclSocketVariables {
    std::optional<std::string> socket_ifname;  // NCCL_SOCKET_IFNAME
    std::optional<std::string> socket_family;  // NCCL_SOCKET_FAMILY
    std::optional<std::string> comm_id;        // NCCL_COMM_ID
};

// Which step of ncclFindInterfaces found them.
enum class SocketRule { socket_ifname, ib, comm_id_subnet, not_docker_lo_virbr, docker, lo, virbr, none };
std::string_view to_string(SocketRule rule);

struct ChosenInterface {
    std::string name;
    IpAddress address;
};

struct SocketChoice {
    SocketRule rule = SocketRule::none;
    // NET/Socket's list; the first is NET/IB's out-of-band interface and,
    // without NCCL_COMM_ID, the bootstrap's.
    std::vector<ChosenInterface> interfaces;
    std::optional<ChosenInterface> bootstrap;  // bootstrapNetInit's
    std::vector<std::string> notes;            // what this reading could not follow (a host name in NCCL_COMM_ID)
};

SocketChoice choose_socket_interfaces(const InterfaceList& list, const NcclSocketVariables& variables);

// NCCL_SOCKET_IFNAME as ncclFindInterfaces reads it: set and longer than
// one character; nullopt when NCCL ignores it.
std::optional<std::string> effective_socket_ifname(const NcclSocketVariables& variables);

// "10.0.0.1:29500" or "[fe80::1]:29500": the address of NCCL_COMM_ID, where it is numeric.
std::optional<IpAddress> comm_id_address(std::string_view comm_id);

// Whether `address` is in the subnet of `entry` (matchSubnet).
bool same_subnet(const InterfaceAddress& entry, const IpAddress& address);

}  // namespace provision::network
