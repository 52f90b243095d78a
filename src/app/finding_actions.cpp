#include "app/finding_actions.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "health/actions.h"
#include "health/torch_fix.h"

namespace provision {

std::vector<Action> finding_actions(const Report& report, const RecipeSet& recipes) {
    ActionFacts facts;
    facts.shm_needed_bytes = recipes.pod.shm_min_bytes;
    if (report.network) {
        for (const auto& device : report.network->rdma.devices)
            if (device.access != network::DeviceAccess::usable && !device.verbs_node.empty())
                facts.verbs_nodes.push_back(device.verbs_node);
        facts.ibverbs_missing = report.network->ibverbs_missing;
    }
    if (const TorchBuildSpec* build = serving_torch_build(recipes.torch_builds, report.inventory))
        facts.torch_wheel = fmt::format("torch{} from {} (CUDA {})", build->torch, build->index, build->cuda);
    facts.driver_cuda = report.inventory.driver.cuda;
    facts.driver_version = report.inventory.driver.version;
    std::set<std::string> architectures;
    for (const Gpu& gpu : report.inventory.gpus) {
        architectures.insert(gpu.compute_capability.str());
        if (!gpu.health.xids) continue;
        for (const XidEvent& event : *gpu.health.xids)
            if (std::find(recipes.policy.critical_xids.begin(), recipes.policy.critical_xids.end(), event.xid) !=
                recipes.policy.critical_xids.end())
                facts.xids[gpu.index].push_back(event.xid);
    }
    facts.architectures = fmt::format("{}", fmt::join(architectures, ";"));
    return actions_for(report.findings, facts);
}

}  // namespace provision
