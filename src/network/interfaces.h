// The machine's network interfaces as getifaddrs(3) lists them (NCCL's own
// source for its choice, NVIDIA/nccl src/os/linux.cc ncclOsFindInterfaces),
// or a stand-in list for tests, and each interface's state from sysfs
// (/sys/class/net/<name>/{operstate,mtu,speed}).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

enum class Family { other, ipv4, ipv6 };

// An IPv4 or IPv6 address, in network byte order (IPv4 in the first 4 bytes).
struct IpAddress {
    Family family = Family::other;
    std::array<std::uint8_t, 16> bytes{};
    std::uint32_t scope_id = 0;  // IPv6 link scope

    bool operator==(const IpAddress& other) const {
        return family == other.family && bytes == other.bytes && scope_id == other.scope_id;
    }
    bool loopback() const;
    std::string str() const;  // "10.0.0.5", "fe80::1"
};

// "10.0.0.5" or "fe80::1" (no host names); nullopt for anything else.
std::optional<IpAddress> parse_ip_address(std::string_view text);

// One entry of getifaddrs: an interface with one address (or none: the
// entry every interface has for its link, family other).
struct InterfaceAddress {
    std::string name;
    bool up = false;        // IFF_UP
    bool running = false;   // IFF_RUNNING: up and with a carrier, NCCL's test
    bool loopback = false;  // IFF_LOOPBACK
    IpAddress address;      // family other: no IP address in this entry
    IpAddress netmask;
};

struct InterfaceList {
    std::vector<InterfaceAddress> entries;  // in getifaddrs' order
    std::size_t left_out = 0;               // past the bound (below): not read
    std::string error;                      // getifaddrs failed, or the stand-in could not be read
};

// The most entries kept, by core/bounded_keep.h's rule: the first
// kMostInterfaceEntries with an address (those NCCL can take), and the first
// kMostInterfaceEntries of the rest.  A machine has dozens; an SR-IOV host
// may have thousands, whose addresses getifaddrs lists after every link.
constexpr std::size_t kMostInterfaceEntries = 4096;

// This process's interfaces (getifaddrs).
InterfaceList read_interfaces();

// A stand-in for tests: one entry a line, "NAME FLAGS [ADDRESS/PREFIX]",
// FLAGS a comma-separated set of up, running, loopback (or "-"), a byte of
// NAME may be written \xNN; blank lines and "#" comments skipped.  A line
// that breaks this is an error naming its number.
InterfaceList parse_interface_stand_in(std::string_view text);

// The distinct names, in order of first appearance.
std::vector<std::string> interface_names(const InterfaceList& list);

// /sys/class/net/<name>: "up", "down", "unknown", ...; MTU; speed in Mb/s
// (absent where the driver has none: virtual links answer -1 or EINVAL).
struct InterfaceState {
    std::string operstate;  // "" where unreadable
    std::optional<std::int64_t> mtu;
    std::optional<std::int64_t> speed_mbps;
};
InterfaceState read_interface_state(const std::string& sysfs, const std::string& name);

// Whether `name` can be a file name under /sys/class/net (not empty, no "/",
// not "." or ".."): anything else is never made into a path.
bool safe_file_name(std::string_view name);

}  // namespace provision::network
