#include "pod/link_judgement.h"

#include <algorithm>

#include <fmt/format.h>

#include "packages/version.h"

namespace provision {

namespace {

bool names_match(const Gpu& gpu, const KnownBrokenPeerAccess& rule) {
    return std::any_of(rule.gpu_names.begin(), rule.gpu_names.end(),
                       [&](const std::string& part) { return gpu.name.find(part) != std::string::npos; });
}

bool driver_older(const std::string& driver, const std::string& bound) {
    if (bound.empty()) return true;
    const auto version = Version::parse(driver);
    const auto limit = Version::parse(bound);
    return version && limit && *version < *limit;
}

// The copy result as seen from the pair's first GPU.
PeerCopyResult oriented(const PeerCopyResult& result, const GpuPair& pair) {
    PeerCopyResult copy = result;
    if (copy.first != pair.first) {
        std::swap(copy.first, copy.second);
        std::swap(copy.gb_per_s_forward, copy.gb_per_s_backward);
    }
    return copy;
}

std::string pair_words(const LinkReport& link) {
    return fmt::format("{} and {} ({})", link.pair.first, link.pair.second, link.pair.path_word());
}

LinkReport judge_pair(const GpuPair& pair, const Inventory& inventory, const CopyChecks& checks,
                      const PodRecipe& recipe) {
    LinkReport link;
    link.pair = pair;
    const Gpu& first = inventory.gpus[static_cast<std::size_t>(pair.first)];
    const Gpu& second = inventory.gpus[static_cast<std::size_t>(pair.second)];
    link.expected = expected_peer_bandwidth(pair, first, second, recipe);
    if (checks.run == CopyCheckRun::simulated)
        link.check = PeerCopyResult{
            .first = pair.first, .second = pair.second, .status = PeerCopyStatus::skipped, .detail = "simulated"};
    else if (const PeerCopyResult* result = checks.pair(pair.first, pair.second))
        link.check = oriented(*result, pair);
    if (link.check && link.check->cuda_peer_access == false) {
        link.state = LinkState::unavailable;
        return link;
    }

    // A measured copy decides; a skipped one leaves it to NVML and the recipes.
    if (link.check && link.check->status != PeerCopyStatus::skipped) {
        if (link.check->status != PeerCopyStatus::passed) {
            link.state = LinkState::broken;
        } else {
            const double slower = std::min(link.check->gb_per_s_forward, link.check->gb_per_s_backward);
            link.state = link.expected && slower > 0 && slower < recipe.p2p_slow_below * link.expected->gb_per_s
                             ? LinkState::slow
                             : LinkState::ok;
        }
        return link;
    }
    if (pair.p2p == PeerAccess::unknown) {
        link.state = LinkState::unknown;
        return link;
    }
    if (pair.p2p != PeerAccess::ok) {
        link.state = LinkState::unavailable;
        return link;
    }
    if (checks.run != CopyCheckRun::ran) link.rule = known_broken_rule(pair, inventory, recipe);
    link.state = link.rule ? LinkState::known_broken : LinkState::ok;
    return link;
}

Finding pod_finding(const std::string& signal, const HealthPolicy& policy, std::string words) {
    return {-1, -1, signal, policy.level(signal), std::move(words)};
}

std::string measured_words(const LinkReport& link) {
    const PeerCopyResult& check = *link.check;
    std::string text = fmt::format("{}: {}", pair_words(link), to_string(check.status));
    if (!check.detail.empty()) text += fmt::format(" ({})", check.detail);
    if (check.failed_path)
        text += fmt::format(" through {}, after {} failed ({})", to_string(check.path), to_string(*check.failed_path),
                            check.failed_path_detail);
    return text;
}

// A translating IOMMU of either GPU: with PCIe ACS on, peer traffic is sent
// up to the root complex, where it can be dropped.
std::string iommu_words(const LinkReport& link, const Inventory& inventory, const HostFacts& host) {
    std::vector<std::string> translating;
    for (const int index : {link.pair.first, link.pair.second}) {
        const Gpu& gpu = inventory.gpus[static_cast<std::size_t>(index)];
        const auto it = host.iommu_types.find(gpu.pci_bus_id);
        if (it != host.iommu_types.end() && translates_dma(it->second))
            translating.push_back(fmt::format("GPU {} ({}, IOMMU group type {})", index, gpu.pci_bus_id, it->second));
    }
    if (translating.empty()) return {};
    return fmt::format("; likely cause: a translating IOMMU on {}: with PCIe ACS on, peer traffic goes up to the "
                       "root complex and can be lost; boot the host with the IOMMU in passthrough (iommu=pt) or "
                       "turn ACS off on the GPUs' PCIe switches",
                       fmt::join(translating, ", "));
}

std::string slow_words(const LinkReport& link, double share) {
    return fmt::format("{}: {:.1f} and {:.1f} GB/s, under {:.0f}% of the {:.1f} GB/s {} give{}", pair_words(link),
                       link.check->gb_per_s_forward, link.check->gb_per_s_backward, share * 100,
                       link.expected->gb_per_s, link.expected->basis, link.expected->estimate ? " (an estimate)" : "");
}

void add_findings(const std::vector<LinkReport>& links, const Inventory& inventory, const CopyChecks& checks,
                  const RecipeSet& recipes, const HostFacts& host, std::vector<Finding>& findings) {
    std::vector<std::string> unavailable, measured, slow, known;
    const LinkReport* first_known = nullptr;
    for (const LinkReport& link : links) {
        switch (link.state) {
            case LinkState::unavailable:
                unavailable.push_back(fmt::format("{}: {}", pair_words(link),
                                                  link.pair.p2p == PeerAccess::ok ? std::string_view("CUDA refuses")
                                                                                  : to_string(link.pair.p2p)));
                break;
            case LinkState::broken: measured.push_back(measured_words(link) + iommu_words(link, inventory, host)); break;
            case LinkState::slow: slow.push_back(slow_words(link, recipes.pod.p2p_slow_below)); break;
            case LinkState::known_broken:
                known.push_back(pair_words(link));
                if (!first_known) first_known = &link;
                break;
            case LinkState::ok:
            case LinkState::unknown: break;
        }
    }
    const HealthPolicy& policy = recipes.policy;
    if (!unavailable.empty())
        findings.push_back(pod_finding(
            "p2p_unavailable", policy,
            fmt::format("no peer access between GPUs {}: NCCL moves their data through host memory",
                        fmt::join(unavailable, "; "))));
    if (!measured.empty())
        findings.push_back(pod_finding(
            "p2p_broken", policy,
            fmt::format("peer copies claimed possible failed between GPUs {}: NCCL's first all-reduce over these "
                        "pairs would hang or corrupt data",
                        fmt::join(measured, "; "))));
    if (first_known) {
        const KnownBrokenPeerAccess& rule = *first_known->rule;
        const Gpu& first = inventory.gpus[static_cast<std::size_t>(first_known->pair.first)];
        const Gpu& named = names_match(first, rule) ? first
                                                    : inventory.gpus[static_cast<std::size_t>(first_known->pair.second)];
        const std::string why = checks.run == CopyCheckRun::simulated ? std::string("a simulated machine")
                                : checks.reason.empty()              ? std::string("the copy check did not run")
                                                                     : checks.reason;
        findings.push_back(pod_finding(
            "p2p_broken", policy,
            fmt::format("GPUs {} claim peer access, but {} on driver {} is known to hang or corrupt peer copies "
                        "(recipes: {}); not measured ({})",
                        fmt::join(known, "; "), named.name, inventory.driver.version, rule.source, why)));
    }
    if (!slow.empty())
        findings.push_back(pod_finding("p2p_slow", policy,
                                       fmt::format("peer copies between GPUs {}: the link is degraded or P2P is "
                                                   "routed through host memory",
                                                   fmt::join(slow, "; "))));
}

}  // namespace

const KnownBrokenPeerAccess* known_broken_rule(const GpuPair& pair, const Inventory& inventory,
                                               const PodRecipe& recipe) {
    const std::size_t count = inventory.gpus.size();
    const Gpu& first = inventory.gpus[static_cast<std::size_t>(pair.first)];
    const Gpu& second = inventory.gpus[static_cast<std::size_t>(pair.second)];
    for (const KnownBrokenPeerAccess& rule : recipe.known_broken_p2p) {
        if (count < rule.min_gpus || (rule.max_gpus != 0 && count > rule.max_gpus)) continue;
        if (pair.path == LinkPath::nvlink && !rule.nvlink_pairs) continue;
        if (!names_match(first, rule) && !names_match(second, rule)) continue;
        if (!driver_older(inventory.driver.version, rule.driver_below)) continue;
        return &rule;
    }
    return nullptr;
}

LinkJudgement judge_links(const Inventory& inventory, const CopyChecks& checks, const RecipeSet& recipes,
                          const HostFacts& host) {
    LinkJudgement judgement;
    for (const GpuPair& pair : inventory.pairs)
        judgement.links.push_back(judge_pair(pair, inventory, checks, recipes.pod));
    add_findings(judgement.links, inventory, checks, recipes, host, judgement.findings);
    return judgement;
}

std::string_view to_string(LinkState state) {
    switch (state) {
        case LinkState::ok: return "ok";
        case LinkState::unavailable: return "unavailable";
        case LinkState::broken: return "broken";
        case LinkState::known_broken: return "known-broken";
        case LinkState::slow: return "slow";
        case LinkState::unknown: break;
    }
    return "unknown";
}

const std::vector<LinkState>& all_link_states() {
    static const std::vector<LinkState> states = {LinkState::ok,           LinkState::unavailable, LinkState::broken,
                                                  LinkState::known_broken, LinkState::slow,        LinkState::unknown};
    return states;
}

}  // namespace provision
