#include "network/pci_topology.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace provision::network {
namespace {

constexpr const char* kPathNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                     "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

// ncclGetLevel's old numbers: LOC, PIX, PXB, PHB, SYS, SYS (levelsOldToNew).
constexpr PathType kOldLevels[] = {PathType::loc, PathType::pix, PathType::pxb,
                                   PathType::phb, PathType::sys, PathType::sys};

std::vector<std::string> components(const std::string& path) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start < path.size()) {
        const std::size_t slash = path.find('/', start);
        const std::size_t end = slash == std::string::npos ? path.size() : slash;
        if (end > start) parts.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::string prefix_path(const std::vector<std::string>& parts, std::size_t last) {
    std::string path;
    for (std::size_t i = 0; i <= last && i < parts.size(); ++i) path += "/" + parts[i];
    return path;
}

struct Node {
    bool cpu = false;
    std::string id;                  // the switch's bus id, or the CPU's NUMA node
    std::size_t component = 0;       // where the switch's bus id is in the device's path
};

// ncclTopoGetXmlFromSys: the device's parents up to its CPU.
std::vector<Node> chain_of(const std::vector<std::string>& parts, const PciFacts& facts) {
    std::vector<Node> chain;
    if (parts.empty()) return chain;
    std::size_t at = parts.size() - 1;
    while (true) {
        const bool up_one = at >= 1 && is_bus_id(parts[at - 1]);
        const bool up_two = up_one && at >= 2 && is_bus_id(parts[at - 2]);
        if (!up_two) {
            chain.push_back({true, facts.numa_node ? facts.numa_node(prefix_path(parts, at)) : "-1", at});
            return chain;
        }
        at -= 2;
        chain.push_back({false, parts[at], at});
    }
}

// getBcmGen (src/graph/topo.cc).
int bcm_generation(std::uint64_t id, int level) {
    if ((id & 0xfffffffffffff000ull) == 0x1000c0101000a000ull) return 4;
    if ((id & 0xfffffffffffff000ull) == (0x1000c03010000000ull | static_cast<std::uint64_t>(level) * 0x1000)) return 5;
    return 0;
}

// ncclTopoFlattenBcmSwitches: a sub switch of a BCM switch of the same generation is the switch itself.
void flatten_bcm(std::vector<Node>& chain, const PciFacts& facts) {
    if (!facts.device_id) return;
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        if (chain[i].cpu || chain[i + 1].cpu) continue;
        const auto sub = facts.device_id(chain[i].id), parent = facts.device_id(chain[i + 1].id);
        if (!sub || !parent) continue;
        const int generation = bcm_generation(*parent, 0);
        if (generation != 0 && bcm_generation(*sub, 1) == generation) {
            chain.erase(chain.begin() + static_cast<std::ptrdiff_t>(i));
            --i;
        }
    }
}

void add_bridges(const std::vector<std::string>& parts, std::size_t from, std::vector<std::string>& bridges) {
    for (std::size_t i = from + 1; i + 1 < parts.size(); ++i) bridges.push_back(parts[i]);
}

std::uint32_t dword_at(std::string_view bytes, std::size_t offset) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + 3])) << 24;
}

}  // namespace

std::string_view to_string(PathType type) { return kPathNames[static_cast<int>(type)]; }

std::optional<PathType> parse_gdr_level(std::string_view text) {
    for (int i = 0; i <= static_cast<int>(PathType::sys); ++i)
        if (text == kPathNames[i]) return static_cast<PathType>(i);
    if (!text.empty() && text.front() >= '0' && text.front() <= '9') {
        const std::string copy(text);
        long old = std::strtol(copy.c_str(), nullptr, 0);
        const long most = static_cast<long>(std::size(kOldLevels)) - 1;
        if (old > most) old = most;
        if (old < 0) old = 0;
        return kOldLevels[old];
    }
    return std::nullopt;
}

PathType gdr_level(const std::optional<std::string>& level, const std::optional<std::string>& gdr_c2c) {
    if (level)
        if (const auto parsed = parse_gdr_level(*level)) return *parsed;
    // NCCL_NET_GDR_C2C (default 1): strtoll, as NCCL's parameters read it.
    const bool c2c = !gdr_c2c || gdr_c2c->empty() || std::strtoll(gdr_c2c->c_str(), nullptr, 0) != 0;
    return c2c ? PathType::p2c : PathType::pxb;
}

bool is_bus_id(std::string_view text) {
    // checkBDFFormat: "BBBB:BB:DD.F", hex digits.
    if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11})
        if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    return true;
}

PciPath nccl_pci_path(const std::string& gpu_path, const std::string& nic_path, const PciFacts& facts) {
    const auto gpu_parts = components(gpu_path), nic_parts = components(nic_path);
    auto gpu_chain = chain_of(gpu_parts, facts), nic_chain = chain_of(nic_parts, facts);
    flatten_bcm(gpu_chain, facts);
    flatten_bcm(nic_chain, facts);
    PciPath path;
    for (std::size_t i = 0; i < gpu_chain.size(); ++i) {
        if (gpu_chain[i].cpu) break;
        for (std::size_t j = 0; j < nic_chain.size(); ++j) {
            if (nic_chain[j].cpu || nic_chain[j].id != gpu_chain[i].id) continue;
            // One switch above both: PIX; a link between two switches on the way: PXB.
            path.type = i + j == 0 ? PathType::pix : PathType::pxb;
            add_bridges(gpu_parts, gpu_chain[i].component, path.bridges);
            add_bridges(nic_parts, nic_chain[j].component, path.bridges);
            return path;
        }
    }
    const bool same_cpu = !gpu_chain.empty() && !nic_chain.empty() && gpu_chain.back().id == nic_chain.back().id;
    path.type = same_cpu ? PathType::phb : PathType::sys;
    return path;
}

AcsRedirect acs_redirect_of(std::string_view config) {
    constexpr std::size_t kExtended = 0x100, kEnd = 0x1000;
    constexpr std::uint32_t kAcsId = 0x000d;
    if (config.size() < kExtended + 4) return AcsRedirect::unknown;
    const std::size_t end = config.size() < kEnd ? config.size() : kEnd;
    std::size_t offset = kExtended;
    // Each capability is a dword at least: the list cannot be longer than that without a loop.
    for (std::size_t steps = 0; steps < (kEnd - kExtended) / 4; ++steps) {
        if (offset + 4 > end) return AcsRedirect::unknown;
        const std::uint32_t header = dword_at(config, offset);
        if (header == 0xffffffffu) return AcsRedirect::unknown;  // a device that did not answer
        if (header == 0) return AcsRedirect::off;                 // no extended capability at all
        if ((header & 0xffff) == kAcsId) {
            if (offset + 8 > end) return AcsRedirect::unknown;
            const std::uint32_t control = dword_at(config, offset + 4) >> 16;  // ACS Control at +6
            constexpr std::uint32_t kRequestRedirect = 1u << 2, kCompletionRedirect = 1u << 3;
            return (control & (kRequestRedirect | kCompletionRedirect)) != 0 ? AcsRedirect::on : AcsRedirect::off;
        }
        const std::size_t next = (header >> 20) & 0xffc;
        if (next == 0) return AcsRedirect::off;
        if (next < kExtended) return AcsRedirect::unknown;  // a loop ends at the step count above
        offset = next;
    }
    return AcsRedirect::unknown;
}

}  // namespace provision::network
