#include "gpu/gpu_links.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace provision {

bool LinkErrorCounts::any() const {
    return nvlink_replay || nvlink_recovery || nvlink_crc || nvlink_recovery_events || nvlink_recovery_failed ||
           nvlink_symbol_errors || pcie_replays;
}

std::vector<std::pair<std::string_view, std::uint64_t>> LinkErrorCounts::named() const {
    const std::pair<std::string_view, const std::optional<std::uint64_t>*> counters[] = {
        {"nvlink_replay", &nvlink_replay},
        {"nvlink_recovery", &nvlink_recovery},
        {"nvlink_crc", &nvlink_crc},
        {"nvlink_recovery_events", &nvlink_recovery_events},
        {"nvlink_recovery_failed", &nvlink_recovery_failed},
        {"nvlink_symbol_errors", &nvlink_symbol_errors},
        {"pcie_replays", &pcie_replays}};
    std::vector<std::pair<std::string_view, std::uint64_t>> read;
    for (const auto& [name, value] : counters)
        if (*value) read.emplace_back(name, **value);
    return read;
}


namespace {

struct Named {
    LinkPath path;
    const char* word;
};
constexpr Named kPathWords[] = {{LinkPath::pix, "PIX"},   {LinkPath::pxb, "PXB"}, {LinkPath::phb, "PHB"},
                                {LinkPath::node, "NODE"}, {LinkPath::sys, "SYS"}, {LinkPath::unknown, "unknown"}};

constexpr std::string_view kAccessWords[] = {"ok",
                                             "chipset-not-supported",
                                             "gpu-not-supported",
                                             "topology-not-supported",
                                             "disabled-by-regkey",
                                             "not-supported",
                                             "unknown"};

}  // namespace

std::string path_word(LinkPath path, unsigned nvlinks) {
    if (path == LinkPath::nvlink) return fmt::format("NV{}", nvlinks);
    for (const auto& named : kPathWords)
        if (named.path == path) return named.word;
    return "unknown";
}

std::optional<PathWord> parse_path_word(std::string_view text) {
    if (text.size() > 2 && text.starts_with("NV") && text.size() <= 4 &&
        std::all_of(text.begin() + 2, text.end(), [](unsigned char c) { return std::isdigit(c); }) && text[2] != '0')
        return PathWord{LinkPath::nvlink, static_cast<unsigned>(std::stoul(std::string(text.substr(2))))};
    for (const auto& named : kPathWords)
        if (named.path != LinkPath::unknown && text == named.word) return PathWord{named.path, 0};
    return std::nullopt;
}

const std::vector<std::string>& path_words() {
    static const std::vector<std::string> words = {"NV<n>", "PIX", "PXB", "PHB", "NODE", "SYS"};
    return words;
}

std::string_view to_string(PeerAccess access) { return kAccessWords[static_cast<int>(access)]; }

std::optional<PeerAccess> parse_peer_access(std::string_view text) {
    for (std::size_t i = 0; i < std::size(kAccessWords); ++i)
        if (text == kAccessWords[i]) return static_cast<PeerAccess>(i);
    return std::nullopt;
}

const std::vector<std::string>& peer_access_words() {
    static const std::vector<std::string> words(std::begin(kAccessWords), std::end(kAccessWords));
    return words;
}

namespace {

std::uint64_t pair_key(int first, int second) {
    const auto low = static_cast<std::uint32_t>(std::min(first, second));
    const auto high = static_cast<std::uint32_t>(std::max(first, second));
    return (static_cast<std::uint64_t>(low) << 32) | high;
}

}  // namespace

bool HostTopology::add(const HostPair& pair) {
    ++probes_;
    const auto [it, added] = index_.emplace(pair_key(pair.first, pair.second), pairs_.size());
    if (added) pairs_.push_back(pair);
    return added;
}

const HostPair* HostTopology::find(int first, int second) const {
    ++probes_;
    const auto it = index_.find(pair_key(first, second));
    return it == index_.end() ? nullptr : &pairs_[it->second];
}

std::vector<GpuPair> visible_pairs(const std::vector<int>& nvml_indices, const HostTopology& host) {
    std::vector<GpuPair> pairs;
    for (std::size_t a = 0; a < nvml_indices.size(); ++a)
        for (std::size_t b = a + 1; b < nvml_indices.size(); ++b) {
            GpuPair pair;
            pair.first = static_cast<int>(a);
            pair.second = static_cast<int>(b);
            if (const HostPair* known = host.find(nvml_indices[a], nvml_indices[b]);
                known && nvml_indices[a] >= 0 && nvml_indices[b] >= 0) {
                pair.path = known->path;
                pair.nvlinks = known->nvlinks;
                pair.p2p = known->p2p;
            }
            pairs.push_back(pair);
        }
    return pairs;
}

}  // namespace provision
