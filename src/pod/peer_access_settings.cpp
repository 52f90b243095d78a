#include "pod/peer_access_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"

namespace provision {

namespace {

std::string pair_list(const std::vector<LinkReport>& links, bool nvlink) {
    std::vector<std::string> pairs;
    for (const LinkReport& link : links)
        if (link.broken() && (link.pair.path == LinkPath::nvlink) == nvlink)
            pairs.push_back(fmt::format("{} and {}", link.pair.first, link.pair.second));
    return fmt::format("{}", fmt::join(pairs, ", "));
}

std::string assignments(const std::vector<std::pair<std::string, std::string>>& values) {
    std::vector<std::string> words;
    for (const auto& [name, value] : values) words.push_back(fmt::format("{}={}", name, echoed(value)));
    return fmt::format("{}", fmt::join(words, ", "));
}

// Why the plan writes what it writes.
std::string broken_words(const std::vector<LinkReport>& links, bool pcie_only, const std::vector<int>& draining) {
    if (!draining.empty())
        return fmt::format("the driver asks for peer traffic to stop on GPU{} {} (recovery action drain-p2p)",
                           draining.size() == 1 ? "" : "s", fmt::join(draining, ", "));
    if (pcie_only)
        return fmt::format("peer copies are broken between GPUs joined by PCIe ({}) while NVLink pairs pass",
                           pair_list(links, false));
    std::string all = pair_list(links, true);
    const std::string pcie = pair_list(links, false);
    if (!all.empty() && !pcie.empty()) all += ", ";
    return fmt::format("peer copies are broken between GPUs {}", all + pcie);
}

}  // namespace

PeerAccessState peer_access_state(const std::vector<LinkReport>& links) {
    bool pcie_broken = false, nvlink_broken = false, nvlink_passes = false;
    for (const LinkReport& link : links) {
        const bool nvlink = link.pair.path == LinkPath::nvlink;
        if (link.broken()) (nvlink ? nvlink_broken : pcie_broken) = true;
        else if (nvlink) nvlink_passes = true;
    }
    if (!pcie_broken && !nvlink_broken) return PeerAccessState::works;
    if (!nvlink_broken && nvlink_passes) return PeerAccessState::pcie_broken;
    return PeerAccessState::broken;
}

PeerAccessPlan plan_peer_access_settings(const std::vector<LinkReport>& links,
                                         const std::vector<const PeerAccessSettings*>& tables,
                                         const UserValues& users, const std::vector<int>& draining) {
    PeerAccessPlan plan;
    plan.state = draining.empty() ? peer_access_state(links) : PeerAccessState::broken;
    if (plan.state == PeerAccessState::works) return plan;
    const bool pcie_only = plan.state == PeerAccessState::pcie_broken;
    std::vector<std::pair<std::string, std::string>> written;
    std::vector<std::string> kept;  // per table: the environment's values that stay, and provision's not written
    for (const PeerAccessSettings* table : tables) {
        const auto& wanted = pcie_only ? table->env_pcie_broken : table->env_broken;
        if (wanted.empty()) continue;
        // The table's variables are one decision: a user who set any of them made it.
        std::vector<std::string> decision;
        std::vector<std::pair<std::string, std::string>> users_own;
        for (const auto* group : {&table->env_pcie_broken, &table->env_broken})
            for (const auto& [name, value] : *group)
                if (std::find(decision.begin(), decision.end(), name) == decision.end()) {
                    decision.push_back(name);
                    if (const auto user = users.of(name)) users_own.emplace_back(name, *user);
                }
        std::vector<std::pair<std::string, std::string>> refused;
        for (UserDecision& decided : users.decide_together({wanted.begin(), wanted.end()}, decision)) {
            (decided.written ? written : refused).emplace_back(decided.name, decided.value);
            plan.settings.push_back(std::move(decided));
        }
        if (!refused.empty())
            kept.push_back(fmt::format("the environment's {} {}, so provision's {} {} not written",
                                       assignments(users_own), users_own.size() == 1 ? "stays" : "stay",
                                       assignments(refused), refused.size() == 1 ? "is" : "are"));
    }
    plan.why = broken_words(links, pcie_only, draining);
    if (!written.empty()) plan.why += fmt::format("; written: {}", assignments(written));
    if (!kept.empty()) plan.why += fmt::format("; {}", fmt::join(kept, "; "));
    return plan;
}


}  // namespace provision
