#include "pod/pod.h"

#include "pod/gpu_links_judgement.h"

namespace provision {

namespace {

void append(std::vector<Finding>& into, std::vector<Finding> more) {
    into.insert(into.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

}  // namespace

PodReport judge_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                    const CopyChecks& checks, const ContainerLimits& container, const HostFacts& host,
                    const NcclFacts& nccl, const UserValues& users) {
    PodReport pod;
    LinkJudgement links = judge_links(inventory, checks, recipes, host);
    pod.links = std::move(links.links);
    pod.findings = std::move(links.findings);
    append(pod.findings, judge_nvlinks(inventory, recipes.policy));
    append(pod.findings, judge_gpu_models(inventory, recipes.policy));
    append(pod.findings, judge_host_links(inventory, checks, recipes));
    append(pod.findings, judge_link_errors(inventory, checks, recipes.policy));
    pod.container = container;
    append(pod.findings, judge_container(container, recipes.pod, recipes.policy));
    if (checks.run == CopyCheckRun::ran) pod.host_copies = checks.hosts;
    pod.host = host;
    pod.nccl = nccl;
    pod.host_memory = checks.host_memory;
    pod.nccl_all_reduce = checks.nccl_all_reduce;
    pod.link_errors_after = checks.link_errors_after;
    pod.nccl_judgement = judge_nccl(nccl.library, nccl.paths, inventory, checks, host, recipes.policy, users);
    append(pod.findings, pod.nccl_judgement.findings);
    std::vector<int> draining;
    for (const Gpu& gpu : inventory.gpus)
        if (gpu.health.recovery_action == RecoveryAction::drain_p2p) draining.push_back(gpu.index);
    pod.peer_access =
        plan_peer_access_settings(pod.links, {&recipes.pod.p2p_settings, &workload.p2p_settings}, users, draining);
    return pod;
}

PodReport assess_pod(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                     const CopyChecks& checks, const NcclFacts& nccl, const UserValues& users,
                     const std::string& sysfs) {
    std::vector<std::string> bus_ids;
    for (const Gpu& gpu : inventory.gpus) bus_ids.push_back(gpu.pci_bus_id);
    return judge_pod(inventory, recipes, workload, checks, read_container_limits(),
                     read_host_facts(bus_ids, {sysfs, "/proc/self/status"}), nccl, users);
}

void add_pod_settings(const PodReport& pod, EnvSettings& env) {
    UserValues::apply(pod.peer_access.settings, env);
    UserValues::apply(pod.nccl_judgement.settings, env);
}

}  // namespace provision
