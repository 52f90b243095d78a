#include "network/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "core/bounded_keep.h"
#include "core/text.h"
#include "network/sysfs_files.h"

namespace provision::network {
namespace {

// Addresses are what NCCL takes an interface by; links without one come
// first in getifaddrs' list and must not crowd them out.
using InterfaceKeep = BoundedKeep<InterfaceAddress>;
constexpr KeepRule kInterfaceKeepRule{kMostInterfaceEntries, kMostInterfaceEntries, KeepEnd::first};

void offer(InterfaceKeep& keep, InterfaceAddress entry) {
    const bool addressed = entry.address.family != Family::other;
    keep.offer(std::move(entry), addressed);
}

void take(InterfaceKeep& keep, InterfaceList& list) {
    list.left_out = keep.left_out();
    list.entries = keep.take();
}

IpAddress from_sockaddr(const sockaddr* address) {
    IpAddress ip;
    if (!address) return ip;
    if (address->sa_family == AF_INET) {
        ip.family = Family::ipv4;
        std::memcpy(ip.bytes.data(), &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
    } else if (address->sa_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
        ip.family = Family::ipv6;
        std::memcpy(ip.bytes.data(), &in6->sin6_addr, 16);
        ip.scope_id = in6->sin6_scope_id;
    }
    return ip;
}

// A netmask of `bits` ones, for the stand-in's "/PREFIX".
IpAddress mask_of(Family family, int bits) {
    IpAddress mask;
    mask.family = family;
    for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8)
        mask.bytes[static_cast<std::size_t>(i)] = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    return mask;
}

// NAME with \xNN escapes undone; nullopt for a broken escape.
std::optional<std::string> unescaped(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') {
            out += text[i];
            continue;
        }
        if (text.substr(i, 2) != "\\x" || i + 4 > text.size()) return std::nullopt;
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(text.data() + i + 2, text.data() + i + 4, value, 16);
        if (ec != std::errc() || end != text.data() + i + 4) return std::nullopt;
        out += static_cast<char>(value);
        i += 3;
    }
    return out;
}

std::vector<std::string_view> words_of(std::string_view line) {
    std::vector<std::string_view> words;
    std::size_t at = 0;
    while (at < line.size()) {
        while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
        const std::size_t start = at;
        while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
        if (at > start) words.push_back(line.substr(start, at - start));
    }
    return words;
}

}  // namespace

bool IpAddress::loopback() const {
    if (family == Family::ipv4) return bytes[0] == 127;
    if (family == Family::ipv6) {
        for (std::size_t i = 0; i < 15; ++i)
            if (bytes[i] != 0) return false;
        return bytes[15] == 1;
    }
    return false;
}

std::string IpAddress::str() const {
    char text[INET6_ADDRSTRLEN] = "";
    if (family == Family::ipv4) ::inet_ntop(AF_INET, bytes.data(), text, sizeof text);
    if (family == Family::ipv6) ::inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
    return text;
}

std::optional<IpAddress> parse_ip_address(std::string_view text) {
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    const std::string copy(text);
    IpAddress ip;
    if (::inet_pton(AF_INET, copy.c_str(), ip.bytes.data()) == 1) {
        ip.family = Family::ipv4;
        return ip;
    }
    if (::inet_pton(AF_INET6, copy.c_str(), ip.bytes.data()) == 1) {
        ip.family = Family::ipv6;
        return ip;
    }
    return std::nullopt;
}

InterfaceList read_interfaces() {
    InterfaceList list;
    ifaddrs* head = nullptr;
    if (::getifaddrs(&head) != 0) {
        list.error = fmt::format("getifaddrs: {}", std::strerror(errno));
        return list;
    }
    InterfaceKeep keep(kInterfaceKeepRule);
    for (const ifaddrs* entry = head; entry; entry = entry->ifa_next) {
        InterfaceAddress one;
        one.name = entry->ifa_name ? entry->ifa_name : "";
        one.up = (entry->ifa_flags & IFF_UP) != 0;
        one.running = (entry->ifa_flags & IFF_RUNNING) != 0;
        one.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
        one.address = from_sockaddr(entry->ifa_addr);
        one.netmask = from_sockaddr(entry->ifa_netmask);
        offer(keep, std::move(one));
    }
    ::freeifaddrs(head);
    take(keep, list);
    return list;
}

InterfaceList parse_interface_stand_in(std::string_view text) {
    InterfaceList list;
    InterfaceKeep keep(kInterfaceKeepRule);
    std::size_t number = 0;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        ++number;
        const auto words = words_of(line);
        if (words.empty() || words[0].front() == '#') continue;
        auto fail = [&](const std::string& why) {
            list.error = fmt::format("line {}: {}", number, why);
            list.entries.clear();
        };
        if (words.size() < 2 || words.size() > 3) {
            fail("expected NAME FLAGS [ADDRESS/PREFIX]");
            return list;
        }
        InterfaceAddress one;
        const auto name = unescaped(words[0]);
        if (!name) {
            fail("a \\ in the name must start \\xNN");
            return list;
        }
        one.name = *name;
        if (words[1] != "-") {
            for (std::string_view flags = words[1]; !flags.empty();) {
                const std::size_t comma = flags.find(',');
                const std::string_view flag = flags.substr(0, comma);
                flags = comma == std::string_view::npos ? std::string_view() : flags.substr(comma + 1);
                if (flag == "up") one.up = true;
                else if (flag == "running") one.running = true;
                else if (flag == "loopback") one.loopback = true;
                else {
                    fail(fmt::format("unknown flag '{}' (up, running, loopback)", printable(flag, 32)));
                    return list;
                }
            }
        }
        if (words.size() == 3) {
            const std::string_view address = words[2];
            const std::size_t slash = address.find('/');
            const auto ip = parse_ip_address(address.substr(0, slash));
            int bits = -1;
            if (slash != std::string_view::npos) {
                const std::string_view prefix = address.substr(slash + 1);
                const auto [at, ec] = std::from_chars(prefix.data(), prefix.data() + prefix.size(), bits);
                if (ec != std::errc() || at != prefix.data() + prefix.size()) bits = -1;
            }
            const int most = ip && ip->family == Family::ipv4 ? 32 : 128;
            if (!ip || bits < 0 || bits > most) {
                fail(fmt::format("'{}' is no ADDRESS/PREFIX", echoed(address)));
                return list;
            }
            one.address = *ip;
            one.netmask = mask_of(ip->family, bits);
        }
        offer(keep, std::move(one));
    }
    take(keep, list);
    return list;
}

std::vector<std::string> interface_names(const InterfaceList& list) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const auto& entry : list.entries)
        if (seen.insert(entry.name).second) names.push_back(entry.name);
    return names;
}

bool safe_file_name(std::string_view name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
           name.find('\0') == std::string_view::npos;
}

InterfaceState read_interface_state(const std::string& sysfs, const std::string& name) {
    InterfaceState state;
    if (!safe_file_name(name)) return state;
    const std::string folder = sysfs + "/class/net/" + name + "/";
    state.operstate = read_attribute(folder + "operstate", 32).value_or("");
    if (const auto mtu = read_number_attribute(folder + "mtu"); mtu && *mtu > 0) state.mtu = *mtu;
    if (const auto speed = read_number_attribute(folder + "speed"); speed && *speed > 0) state.speed_mbps = *speed;
    return state;
}

}  // namespace provision::network
