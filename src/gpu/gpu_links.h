// How the GPUs of a machine are joined, named as `nvidia-smi topo -m` names
// it: for each pair the path (NV<n>, PIX, PXB, PHB, NODE, SYS) and whether
// the driver allows peer access (NVML's P2P status), and for each GPU its
// NVLink links and its PCIe link to the host.  NVML (gpu/nvml_topology.h)
// or a fixture (gpu/gpu_fixture.h) fills them; a fact neither can give is
// unknown, never an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace provision {

// The PCIe relation of two GPUs (nvmlGpuTopologyLevel_t) or an NVLink
// between them, the better of the two.
enum class LinkPath {
    nvlink,   // NV<n>: n NVLinks join them (directly or through NVSwitch)
    pix,      // at most one PCIe switch between them (NVML SINGLE)
    pxb,      // several PCIe switches, no host bridge (MULTIPLE)
    phb,      // through one PCIe host bridge (HOSTBRIDGE)
    node,     // through the interconnect between host bridges of one NUMA node (NODE)
    sys,      // across NUMA nodes (SYSTEM)
    unknown,  // NVML could not say
};

// nvmlGpuP2PStatus_t, in `nvidia-smi topo -p2p`'s order.
enum class PeerAccess {
    ok,
    chipset_not_supported,
    gpu_not_supported,
    topology_not_supported,
    disabled_by_regkey,
    not_supported,
    unknown,
};

// "NV18" for nvlink with 18 links, else "PIX", "PXB", "PHB", "NODE", "SYS",
// "unknown".
std::string path_word(LinkPath path, unsigned nvlinks);
// The reverse: nullopt for any other text (NV0, NV, nv4 included).
struct PathWord {
    LinkPath path;
    unsigned nvlinks;
};
std::optional<PathWord> parse_path_word(std::string_view text);
const std::vector<std::string>& path_words();  // for messages: "NV<n>", "PIX", ...

// "ok", "chipset-not-supported", "gpu-not-supported", "topology-not-supported",
// "disabled-by-regkey", "not-supported", "unknown".
std::string_view to_string(PeerAccess access);
std::optional<PeerAccess> parse_peer_access(std::string_view text);
const std::vector<std::string>& peer_access_words();

// NVLink links NVML lists for one GPU.
struct NvLinkCount {
    unsigned total = 0;
    unsigned active = 0;
    bool operator==(const NvLinkCount&) const = default;
};

// A GPU's link error counters, each summed over its NVLinks (the links
// that moved are named), and its PCIe replay counter: read at start, and
// again after the copies where they ran.  Each is empty where the driver
// cannot read it.
struct LinkErrorCounts {
    std::optional<std::uint64_t> nvlink_replay;     // nvmlDeviceGetNvLinkErrorCounter, DL_REPLAY
    std::optional<std::uint64_t> nvlink_recovery;   // DL_RECOVERY
    std::optional<std::uint64_t> nvlink_crc;        // DL_CRC_FLIT + DL_CRC_DATA
    std::optional<std::uint64_t> nvlink_recovery_events;  // Blackwell: link recoveries (field 215)
    std::optional<std::uint64_t> nvlink_recovery_failed;  // Blackwell: recoveries that failed (field 214)
    std::optional<std::uint64_t> nvlink_symbol_errors;    // Blackwell: symbol errors (field 221)
    std::optional<std::uint64_t> pcie_replays;      // nvmlDeviceGetPcieReplayCounter
    bool any() const;
    // The counters read, by their names in the report ("nvlink_replay", ...).
    std::vector<std::pair<std::string_view, std::uint64_t>> named() const;
};

// A GPU's PCIe link to the host: the current generation and width and the
// most the device and the slot allow.
struct PcieLink {
    unsigned generation = 0;
    unsigned width = 0;
    unsigned max_generation = 0;
    unsigned max_width = 0;
    bool operator==(const PcieLink&) const = default;
};

// Two GPUs of the host, by NVML index (fixture position for a fixture).
struct HostPair {
    int first = -1;
    int second = -1;
    LinkPath path = LinkPath::unknown;
    unsigned nvlinks = 0;                  // with LinkPath::nvlink
    PeerAccess p2p = PeerAccess::unknown;  // reads and writes: the first of them that is not ok
};

// The known pairs of a host's GPUs, each at most once (in either order).
// add() and find() are one hash lookup each, so reading or filling in the
// pairs of N GPUs is linear in the pairs, never in their square.
class HostTopology {
public:
    // Adds `pair`; false, and nothing added, when the pair is already there.
    bool add(const HostPair& pair);
    const HostPair* find(int first, int second) const;
    const std::vector<HostPair>& pairs() const { return pairs_; }
    // The pairs add() and find() have looked at, one per call: the work,
    // which tests count (never the time).
    std::uint64_t probes() const { return probes_; }

private:
    std::vector<HostPair> pairs_;
    std::unordered_map<std::uint64_t, std::size_t> index_;  // both GPUs, lower first -> position in pairs_
    mutable std::uint64_t probes_ = 0;
};

// A pair of the GPUs the workload sees, by their CUDA indices (first < second).
struct GpuPair {
    int first = 0;
    int second = 0;
    LinkPath path = LinkPath::unknown;
    unsigned nvlinks = 0;
    PeerAccess p2p = PeerAccess::unknown;

    std::string path_word() const { return provision::path_word(path, nvlinks); }
};

// Every pair of `nvml_indices` (the visible GPUs' NVML indices in CUDA's
// order, -1 where unknown) in CUDA's order, (0,1), (0,2), ..., (1,2), ...;
// a pair the host topology does not hold is unknown.
std::vector<GpuPair> visible_pairs(const std::vector<int>& nvml_indices, const HostTopology& host);

}  // namespace provision
