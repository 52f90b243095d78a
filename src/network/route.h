// The interface the kernel sends to MASTER_ADDR through: a UDP socket
// connected to it (connect(2) on a datagram socket only picks the route and
// the source address; no packet is sent) tells its local address
// (getsockname), and the interface that holds that address is the one.
// A host name is resolved on a thread of its own within a time limit, so a
// slow or absent DNS answer costs at most that limit.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "network/interfaces.h"

namespace provision::network {

struct RouteToMaster {
    std::string master_addr;              // as the launcher gave it
    std::optional<IpAddress> address;     // resolved
    std::optional<IpAddress> local;       // the source address the kernel picks
    std::string interface;                // the interface that holds `local`; "" when none does
    bool loopback = false;                // the route stays on this host (MASTER_ADDR is loopback)
    std::string detail;                   // why no route was found
};

// How long a host name may take to resolve.
constexpr std::chrono::milliseconds kResolveLimit{500};

// MASTER_ADDR to an address: numeric at once, a host name through
// getaddrinfo within `limit`; nullopt with `detail` saying why.
std::optional<IpAddress> resolve_master(const std::string& master_addr, std::chrono::milliseconds limit,
                                        std::string& detail);

// `address` and `port` as the socket calls take them; returns the length used.
socklen_t socket_address_of(const IpAddress& address, std::uint16_t port, sockaddr_storage& into);

// The kernel's source address toward `address`; nullopt with `detail`.
std::optional<IpAddress> local_address_toward(const IpAddress& address, std::string& detail);

// The whole route: resolved, the local address, and the interface of
// `interfaces` that holds it.  `local_stand_in` (tests) replaces the
// kernel's answer: an address, or "unreachable".
RouteToMaster route_to_master(const std::string& master_addr, const InterfaceList& interfaces,
                              const std::optional<std::string>& local_stand_in = std::nullopt);

}  // namespace provision::network
