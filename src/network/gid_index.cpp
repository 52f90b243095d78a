#include "network/gid_index.h"

#include <arpa/inet.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "nccl/nccl_paths.h"

namespace provision::network {
namespace {

std::uint32_t word(const Gid& gid, int i) {  // s6_addr32[i], host order
    const auto at = static_cast<std::size_t>(i) * 4;
    return (std::uint32_t{gid[at]} << 24) | (std::uint32_t{gid[at + 1]} << 16) | (std::uint32_t{gid[at + 2]} << 8) |
           gid[at + 3];
}

Gid value_or_zero(const std::vector<std::optional<Gid>>& table, int index) {
    if (index < 0 || static_cast<std::size_t>(index) >= table.size() || !table[static_cast<std::size_t>(index)])
        return Gid{};
    return *table[static_cast<std::size_t>(index)];
}

// envIbAddrRange: "ADDRESS/BITS" of the family asked for; nullopt prefix
// and 0 bits when unset or unusable (every GID then matches).
struct AddressRange {
    std::optional<std::array<std::uint8_t, 16>> base;
    long bits = 0;
};

AddressRange address_range(bool ipv6, const std::optional<std::string>& text) {
    AddressRange range;
    if (!text || text->empty()) return range;
    const std::string copy = text->substr(0, 127);  // addrString[128]
    const std::size_t slash = copy.find('/');
    if (slash == std::string::npos) return range;
    std::array<std::uint8_t, 16> base{};
    if (::inet_pton(ipv6 ? AF_INET6 : AF_INET, copy.substr(0, slash).c_str(), base.data()) != 1) return range;
    const long bits = std::strtol(copy.c_str() + slash + 1, nullptr, 10);
    if (bits > (ipv6 ? 128 : 32)) return range;
    range.base = base;
    range.bits = bits;
    return range;
}

// matchGidAddrPrefix: the GID's address under the range's mask.
bool in_range(bool ipv6, const AddressRange& range, const Gid& gid) {
    long bits = range.bits;
    if (bits <= 0) return bits == 0;
    const auto mask = [](long n) -> std::uint32_t {
        return n >= 32 ? 0xffffffffu : ~((std::uint32_t{1} << (32 - n)) - 1);
    };
    const auto base_word = [&](int i) {
        const auto at = static_cast<std::size_t>(i) * 4;
        const auto& b = *range.base;
        return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) |
               b[at + 3];
    };
    if (!ipv6) return (base_word(0) & mask(bits)) == (word(gid, 3) & mask(bits));
    for (int i = 0; i < 4 && bits > 0; ++i) {
        if (bits >= 32) {
            if (base_word(i) != word(gid, i)) return false;
            bits -= 32;
        } else {
            return (base_word(i) & mask(bits)) == (word(gid, i) & mask(bits));
        }
    }
    return bits <= 0;
}

}  // namespace

std::optional<Gid> parse_gid(std::string_view text) {
    // Eight groups of four hex digits, colons between: what sysfs writes.
    if (text.size() != 39) return std::nullopt;
    Gid gid{};
    for (std::size_t group = 0; group < 8; ++group) {
        const std::size_t at = group * 5;
        if (group < 7 && text[at + 4] != ':') return std::nullopt;
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + 4, value, 16);
        if (ec != std::errc() || end != text.data() + at + 4) return std::nullopt;
        gid[group * 2] = static_cast<std::uint8_t>(value >> 8);
        gid[group * 2 + 1] = static_cast<std::uint8_t>(value & 0xff);
    }
    return gid;
}

std::string gid_words(const Gid& gid) {
    char text[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, gid.data(), text, sizeof text);
    return text;
}

bool gid_configured(const Gid& gid) {
    const std::uint32_t trailer = word(gid, 1) | word(gid, 2) | word(gid, 3);
    return !((word(gid, 0) | trailer) == 0 || (word(gid, 0) == 0xfe800000u && trailer == 0));
}

bool gid_link_local(const Gid& gid) { return word(gid, 0) == 0xfe800000u && word(gid, 1) == 0; }

bool gid_valid(const Gid& gid) { return gid_configured(gid) && !gid_link_local(gid); }

bool gid_is_ipv4(const Gid& gid) {
    const bool mapped = (word(gid, 0) | word(gid, 1) | (word(gid, 2) ^ 0x0000ffffu)) == 0;
    const bool mapped_multicast = word(gid, 0) == 0xff0e0000u && (word(gid, 1) | (word(gid, 2) ^ 0x0000ffffu)) == 0;
    return mapped || mapped_multicast;
}

std::optional<int> roce_version_of(std::string_view text) {
    if (text.rfind("IB/RoCE v1", 0) == 0 || text.rfind("RoCE v1", 0) == 0) return 1;
    if (text.rfind("RoCE v2", 0) == 0) return 2;
    return std::nullopt;
}

GidChoice nccl_gid_choice(bool infiniband, const std::vector<std::optional<Gid>>& table,
                          const std::function<std::optional<int>(int)>& roce_version, const GidVariables& variables) {
    GidChoice choice;
    const int length = static_cast<int>(table.size());
    auto finish = [&](int index) {
        choice.index = index;
        if (index >= 0 && index < length) choice.gid = table[static_cast<std::size_t>(index)];
        if (!infiniband && index >= 0 && index < length) choice.roce_version = roce_version(index);
        return choice;
    };
    if (infiniband) {
        const long long routable = nccl_parameter(variables.routable_flid_index).value_or(1);
        if (routable >= 0 && routable < length) {
            const Gid gid = value_or_zero(table, static_cast<int>(routable));
            if (gid[4] != 0 || gid[5] != 0) return finish(static_cast<int>(routable));
        }
        return finish(0);
    }
    if (const auto user = nccl_parameter(variables.gid_index); user && *user >= 0) {
        choice.from_user = true;
        return finish(*user > INT_MAX ? INT_MAX : static_cast<int>(*user));
    }
    const bool user_ipv6 = variables.addr_family == "AF_INET6";
    const AddressRange range = address_range(user_ipv6, variables.addr_range);
    const int wanted_version = static_cast<int>(nccl_parameter(variables.roce_version).value_or(2));
    // Each entry's version read at most once.
    std::vector<std::optional<std::optional<int>>> versions(table.size());
    auto version = [&](int index) -> int {
        auto& cached = versions[static_cast<std::size_t>(index)];
        if (!cached) cached = roce_version(index);
        return cached->value_or(-1);
    };
    int index = 0;
    for (int candidate = 1; candidate < length; ++candidate) {
        const Gid current = value_or_zero(table, index), next = value_or_zero(table, candidate);
        const bool current_ipv6 = !gid_is_ipv4(current), next_ipv6 = !gid_is_ipv4(next);
        const bool next_in_range = in_range(user_ipv6, range, next);
        if (next_ipv6 != current_ipv6 && next_ipv6 == user_ipv6 && next_in_range) {
            index = candidate;
            continue;
        }
        if (next_ipv6 != user_ipv6 || !gid_valid(next) || !next_in_range) continue;
        const int current_version = version(index), next_version = version(candidate);
        if ((current_version != next_version || !gid_valid(current)) && next_version == wanted_version)
            index = candidate;
    }
    return finish(index);
}

}  // namespace provision::network
