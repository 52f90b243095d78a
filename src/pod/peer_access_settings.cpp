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
                                         const std::map<std::string, std::string>& environment) {
    PeerAccessPlan plan;
    plan.state = peer_access_state(links);
    if (plan.state == PeerAccessState::works) return plan;
    const bool pcie_only = plan.state == PeerAccessState::pcie_broken;
    std::vector<std::string> refused;
    for (const PeerAccessSettings* table : tables) {
        const auto& wanted = pcie_only ? table->env_pcie_broken : table->env_broken;
        if (wanted.empty()) continue;
        // The table's variables are one decision: a user who set any of them made it.
        std::vector<std::pair<std::string, std::string>> users;
        for (const auto* group : {&table->env_pcie_broken, &table->env_broken})
            for (const auto& [name, value] : *group)
                if (const auto it = environment.find(name);
                    it != environment.end() &&
                    std::none_of(users.begin(), users.end(),
                                 [&](const auto& user) { return user.first == it->first; }))
                    users.emplace_back(it->first, it->second);
        if (users.empty()) {
            plan.write.insert(plan.write.end(), wanted.begin(), wanted.end());
            continue;
        }
        for (const auto& [name, value] : wanted) {
            const auto it = environment.find(name);
            if (it != environment.end() && it->second != value) plan.kept.push_back({name, it->second, value, ""});
            if (it == environment.end() || it->second != value)
                refused.push_back(fmt::format("{}={}", name, value));
        }
        if (!refused.empty())
            refused.back() += fmt::format(" (the environment sets {})", assignments(users));
    }
    plan.why = pcie_only ? fmt::format("peer copies are broken between GPUs joined by PCIe ({}) while NVLink pairs "
                                       "pass",
                                       pair_list(links, false))
                         : fmt::format("peer copies are broken between GPUs {}", [&] {
                               std::string all = pair_list(links, true);
                               const std::string pcie = pair_list(links, false);
                               if (!all.empty() && !pcie.empty()) all += ", ";
                               return all + pcie;
                           }());
    if (!plan.write.empty()) plan.why += fmt::format("; written: {}", assignments(plan.write));
    if (!refused.empty())
        plan.why += fmt::format("; not written, the user's own settings stay: {}", fmt::join(refused, "; "));
    return plan;
}

void apply_peer_access_plan(const PeerAccessPlan& plan, EnvSettings& env) {
    for (const auto& [name, value] : plan.write) env.set(name, value);
    for (const KeptVariable& kept : plan.kept) env.keep(kept);
}

}  // namespace provision
