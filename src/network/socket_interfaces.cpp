#include "network/socket_interfaces.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"
#include "network/nccl_name_list.h"

namespace provision::network {
namespace {

// ncclOsFindInterfaces (src/os/linux.cc).
std::vector<ChosenInterface> find_interfaces(const InterfaceList& list, std::string_view prefix_list,
                                             Family family, int max_interfaces) {
    const NcclNameList names = parse_nccl_name_list(prefix_list, kNcclMaxInterfaces);
    std::vector<ChosenInterface> found;
    for (const InterfaceAddress& entry : list.entries) {
        if (static_cast<int>(found.size()) >= max_interfaces) break;
        if (entry.address.family == Family::other) continue;  // only IPv4 and IPv6
        if (!entry.running) continue;                          // IFF_RUNNING
        if (family != Family::other && entry.address.family != family) continue;
        if (entry.address.family == Family::ipv6 && entry.address.loopback()) continue;
        if (!names.takes(entry.name)) continue;
        const bool seen = std::any_of(found.begin(), found.end(),
                                      [&](const ChosenInterface& one) { return one.name == entry.name; });
        if (!seen) found.push_back({entry.name, entry.address});
    }
    return found;
}

// ncclFindInterfaceMatchSubnet (src/os/linux.cc): the first entry in the subnet.
std::optional<ChosenInterface> match_subnet(const InterfaceList& list, const IpAddress& remote) {
    for (const InterfaceAddress& entry : list.entries)
        if (entry.address.family != Family::other && same_subnet(entry, remote))
            return ChosenInterface{entry.name, entry.address};
    return std::nullopt;
}

}  // namespace

std::string_view to_string(SocketRule rule) {
    switch (rule) {
        case SocketRule::socket_ifname: return "NCCL_SOCKET_IFNAME";
        case SocketRule::ib: return "ib";
        case SocketRule::comm_id_subnet: return "NCCL_COMM_ID";
        case SocketRule::not_docker_lo_virbr: return "default";
        case SocketRule::docker: return "docker";
        case SocketRule::lo: return "lo";
        case SocketRule::virbr: return "virbr";
        case SocketRule::none: return "none";
    }
    return "none";
}

bool same_subnet(const InterfaceAddress& entry, const IpAddress& remote) {
    if (entry.address.family != remote.family) return false;
    const std::size_t bytes = remote.family == Family::ipv4 ? 4 : 16;
    for (std::size_t i = 0; i < bytes; ++i)
        if ((entry.address.bytes[i] & entry.netmask.bytes[i]) != (remote.bytes[i] & entry.netmask.bytes[i]))
            return false;
    // IPv6: link addresses of different scopes share a prefix but not a link.
    return remote.family == Family::ipv4 || entry.address.scope_id == remote.scope_id;
}

std::optional<std::string> effective_socket_ifname(const NcclSocketVariables& variables) {
    // `env && strlen(env) > 1`: one character is no list to NCCL.
    if (!variables.socket_ifname || variables.socket_ifname->size() <= 1) return std::nullopt;
    return variables.socket_ifname;
}

std::optional<IpAddress> comm_id_address(std::string_view comm_id) {
    // ncclSocketGetAddrFromString: "[IPv6]:port", else "host:port".
    if (!comm_id.empty() && comm_id.front() == '[') {
        const std::size_t close = comm_id.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        std::string_view host = comm_id.substr(1, close - 1);
        host = host.substr(0, host.find('%'));  // a link scope's interface: not followed here
        return parse_ip_address(host);
    }
    return parse_ip_address(comm_id.substr(0, comm_id.find(':')));
}

SocketChoice choose_socket_interfaces(const InterfaceList& list, const NcclSocketVariables& variables) {
    SocketChoice choice;
    // ncclEnvSocketFamily: exactly these words, else either family.
    Family family = Family::other;
    if (variables.socket_family == "AF_INET") family = Family::ipv4;
    if (variables.socket_family == "AF_INET6") family = Family::ipv6;

    std::optional<IpAddress> comm_id;
    if (variables.comm_id && variables.comm_id->size() > 1) {
        comm_id = comm_id_address(*variables.comm_id);
        if (!comm_id)
            choice.notes.push_back(fmt::format("NCCL_COMM_ID={} names no numeric address: NCCL resolves it and picks "
                                               "the interface in its subnet, which this reading does not do",
                                               echoed(*variables.comm_id)));
    }

    auto take = [&](SocketRule rule, std::vector<ChosenInterface> found) {
        if (!choice.interfaces.empty() || found.empty()) return;
        choice.rule = rule;
        choice.interfaces = std::move(found);
    };
    if (const auto ifname = effective_socket_ifname(variables)) {
        take(SocketRule::socket_ifname, find_interfaces(list, *ifname, family, kNcclMaxInterfaces));
    } else {
        take(SocketRule::ib, find_interfaces(list, "ib", family, kNcclMaxInterfaces));
        if (comm_id) {
            if (auto match = match_subnet(list, *comm_id)) take(SocketRule::comm_id_subnet, {*match});
        }
        take(SocketRule::not_docker_lo_virbr, find_interfaces(list, "^docker,lo,virbr", family, kNcclMaxInterfaces));
        take(SocketRule::docker, find_interfaces(list, "docker", family, kNcclMaxInterfaces));
        take(SocketRule::lo, find_interfaces(list, "lo", family, kNcclMaxInterfaces));
        take(SocketRule::virbr, find_interfaces(list, "virbr", family, kNcclMaxInterfaces));
    }
    // bootstrapNetInit: with NCCL_COMM_ID the subnet's interface, else the first.
    if (variables.comm_id) {
        if (comm_id) choice.bootstrap = match_subnet(list, *comm_id);
    } else if (!choice.interfaces.empty()) {
        choice.bootstrap = choice.interfaces.front();
    }
    return choice;
}

}  // namespace provision::network
