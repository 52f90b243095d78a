#include "network/route.h"

#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "core/text.h"

namespace provision::network {
namespace {

constexpr std::size_t kLongestHostName = 253;  // RFC 1035's limit on a DNS name

// getaddrinfo's first IPv4 or IPv6 answer.
std::optional<IpAddress> lookup(const std::string& host, std::string& detail) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* answers = nullptr;
    if (const int code = ::getaddrinfo(host.c_str(), nullptr, &hints, &answers); code != 0) {
        detail = fmt::format("cannot resolve {}: {}", echoed(host), ::gai_strerror(code));
        return std::nullopt;
    }
    std::optional<IpAddress> found;
    for (const addrinfo* answer = answers; answer && !found; answer = answer->ai_next) {
        IpAddress ip;
        if (answer->ai_family == AF_INET) {
            ip.family = Family::ipv4;
            std::memcpy(ip.bytes.data(), &reinterpret_cast<const sockaddr_in*>(answer->ai_addr)->sin_addr, 4);
            found = ip;
        } else if (answer->ai_family == AF_INET6) {
            ip.family = Family::ipv6;
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(answer->ai_addr);
            std::memcpy(ip.bytes.data(), &in6->sin6_addr, 16);
            ip.scope_id = in6->sin6_scope_id;  // "fe80::1%eth0": the link it is on
            found = ip;
        }
    }
    ::freeaddrinfo(answers);
    if (!found) detail = fmt::format("{} has no IPv4 or IPv6 address", echoed(host));
    return found;
}

}  // namespace

std::optional<IpAddress> resolve_master(const std::string& master_addr, std::chrono::milliseconds limit,
                                        std::string& detail) {
    if (auto numeric = parse_ip_address(master_addr)) return numeric;
    // "fe80::1%eth0" (or "%2"): a link-local address and the link it is on.
    if (const std::size_t percent = master_addr.find('%'); percent != std::string::npos) {
        auto numeric = parse_ip_address(std::string_view(master_addr).substr(0, percent));
        const std::string zone = master_addr.substr(percent + 1);
        if (numeric && numeric->family == Family::ipv6 && !zone.empty()) {
            unsigned index = ::if_nametoindex(zone.c_str());
            if (index == 0 && zone.find_first_not_of("0123456789") == std::string::npos && zone.size() < 10)
                index = static_cast<unsigned>(std::stoul(zone));
            if (index == 0) {
                detail = fmt::format("{}: no interface '{}' on this node", echoed(master_addr), echoed(zone));
                return std::nullopt;
            }
            numeric->scope_id = index;
            return numeric;
        }
    }
    // "[fe80::1]" as some launch scripts write IPv6.
    if (master_addr.size() > 2 && master_addr.front() == '[' && master_addr.back() == ']')
        if (auto numeric = parse_ip_address(std::string_view(master_addr).substr(1, master_addr.size() - 2)))
            return numeric;
    if (master_addr.empty() || master_addr.size() > kLongestHostName) {
        detail = fmt::format("'{}' is no host name", echoed(master_addr));
        return std::nullopt;
    }
    struct Answer {
        std::optional<IpAddress> address;
        std::string detail;
    };
    std::promise<Answer> promise;
    auto future = promise.get_future();
    // Detached: a resolver that never answers must not hold the run (nor its exec).
    std::thread([promise = std::move(promise), host = master_addr]() mutable {
        Answer answer;
        answer.address = lookup(host, answer.detail);
        promise.set_value(std::move(answer));
    }).detach();
    if (future.wait_for(limit) != std::future_status::ready) {
        detail = fmt::format("{} did not resolve within {} ms", echoed(master_addr),
                             limit.count());
        return std::nullopt;
    }
    Answer answer = future.get();
    detail = answer.detail;
    return answer.address;
}

socklen_t socket_address_of(const IpAddress& address, std::uint16_t port, sockaddr_storage& into) {
    into = sockaddr_storage{};
    if (address.family == Family::ipv4) {
        auto* in = reinterpret_cast<sockaddr_in*>(&into);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        std::memcpy(&in->sin_addr, address.bytes.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&into);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(&in6->sin6_addr, address.bytes.data(), 16);
    in6->sin6_scope_id = address.scope_id;
    return sizeof(sockaddr_in6);
}

std::optional<IpAddress> local_address_toward(const IpAddress& address, std::string& detail) {
    const int family = address.family == Family::ipv4 ? AF_INET : AF_INET6;
    const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        detail = fmt::format("cannot open a UDP socket: {}", std::strerror(errno));
        return std::nullopt;
    }
    sockaddr_storage remote{};
    constexpr std::uint16_t kAnyPort = 9;  // connect() on a datagram socket needs one; nothing is sent to it
    const socklen_t length = socket_address_of(address, kAnyPort, remote);
    std::optional<IpAddress> local;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&remote), length) != 0) {
        detail = fmt::format("no route to {}: {}", address.str(), std::strerror(errno));
    } else {
        sockaddr_storage mine{};
        socklen_t mine_length = sizeof mine;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_length) != 0) {
            detail = fmt::format("getsockname: {}", std::strerror(errno));
        } else {
            IpAddress ip;
            if (mine.ss_family == AF_INET) {
                ip.family = Family::ipv4;
                std::memcpy(ip.bytes.data(), &reinterpret_cast<const sockaddr_in*>(&mine)->sin_addr, 4);
            } else {
                ip.family = Family::ipv6;
                std::memcpy(ip.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(&mine)->sin6_addr, 16);
            }
            local = ip;
        }
    }
    ::close(fd);
    return local;
}

RouteToMaster route_to_master(const std::string& master_addr, const InterfaceList& interfaces,
                              const std::optional<std::string>& local_stand_in) {
    RouteToMaster route;
    route.master_addr = master_addr;
    route.address = resolve_master(master_addr, kResolveLimit, route.detail);
    if (!route.address) return route;
    route.loopback = route.address->loopback();
    if (local_stand_in) {
        route.local = parse_ip_address(*local_stand_in);
        if (!route.local) route.detail = fmt::format("no route to {}", route.address->str());
    } else {
        route.local = local_address_toward(*route.address, route.detail);
    }
    if (!route.local) return route;
    for (const InterfaceAddress& entry : interfaces.entries) {
        if (entry.address.family != route.local->family || entry.address.bytes != route.local->bytes) continue;
        route.interface = entry.name;
        route.loopback = route.loopback || entry.loopback;
        break;
    }
    if (route.interface.empty())
        route.detail = fmt::format("no interface holds {}, the address the kernel sends to {} from",
                                   route.local->str(), route.address->str());
    return route;
}

}  // namespace provision::network
