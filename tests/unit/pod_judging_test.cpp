// The pod stage's judging, as pure functions over synthetic inventories and
// copy-check results: links (p2p_unavailable, p2p_broken measured and from
// the recipes' table, p2p_slow), NVLinks, models, host links, the
// container's limits, and what NCCL is told.
#include <catch2/catch.hpp>

#include <filesystem>

#include "workload_env/user_values.h"
#include "pod/container_limits.h"
#include "pod/gpu_links_judgement.h"
#include "pod/link_figures.h"
#include "pod/link_judgement.h"
#include "pod/peer_access_settings.h"
#include "pod/pod.h"
#include "recipe/health_signals.h"
#include "recipe/recipe_loader.h"
#include "test_support.h"

using namespace provision;

namespace {

const RecipeSet& builtin() {
    static const RecipeSet recipes = load_recipes({test_support::source_path("recipes")});
    return recipes;
}

Gpu gpu_of(int index, const std::string& name, ComputeCapability capability, const std::string& architecture) {
    Gpu gpu;
    gpu.index = index;
    gpu.nvml_index = index;
    gpu.name = name;
    gpu.compute_capability = capability;
    gpu.architecture = architecture;
    return gpu;
}

// `count` H100 SXM joined through NVSwitch (NV18), PCIe Gen5 x16, peer access ok.
Inventory hgx(int count) {
    Inventory inventory;
    inventory.source = InventorySource::driver;
    inventory.driver = {true, "580.159.04", "13.0"};
    for (int i = 0; i < count; ++i) {
        Gpu gpu = gpu_of(i, "NVIDIA H100 80GB HBM3", {9, 0}, "hopper");
        gpu.nvlinks = NvLinkCount{18, 18};
        gpu.nvlink_generation = 4;
        gpu.pcie = PcieLink{5, 16, 5, 16};
        inventory.gpus.push_back(gpu);
    }
    for (int a = 0; a < count; ++a)
        for (int b = a + 1; b < count; ++b) inventory.pairs.push_back({a, b, LinkPath::nvlink, 18, PeerAccess::ok});
    return inventory;
}

// `count` GPUs named `name` on PCIe Gen4 x16, every pair `path` with `p2p`.
Inventory pcie_pod(int count, const std::string& name, const std::string& driver, LinkPath path, PeerAccess p2p) {
    Inventory inventory;
    inventory.source = InventorySource::driver;
    inventory.driver = {true, driver, "12.4"};
    for (int i = 0; i < count; ++i) {
        Gpu gpu = gpu_of(i, name, {8, 9}, "ada");
        gpu.pcie = PcieLink{4, 16, 4, 16};
        inventory.gpus.push_back(gpu);
    }
    for (int a = 0; a < count; ++a)
        for (int b = a + 1; b < count; ++b) inventory.pairs.push_back({a, b, path, 0, p2p});
    return inventory;
}

CopyChecks measured(std::vector<PeerCopyResult> pairs, std::vector<HostCopyResult> hosts = {}) {
    CopyChecks checks;
    checks.run = CopyCheckRun::ran;
    checks.pairs = std::move(pairs);
    checks.hosts = std::move(hosts);
    return checks;
}

CopyChecks not_run() {
    CopyChecks checks;
    checks.reason = "disabled (--no-validate)";
    return checks;
}

std::vector<const Finding*> with_signal(const std::vector<Finding>& findings, const std::string& signal) {
    std::vector<const Finding*> found;
    for (const auto& finding : findings)
        if (finding.signal == signal) found.push_back(&finding);
    return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every pair of an HGX board passed, at `rate` GB/s each way.
std::vector<PeerCopyResult> all_passed(int count, double rate) {
    std::vector<PeerCopyResult> results;
    for (int a = 0; a < count; ++a)
        for (int b = a + 1; b < count; ++b) results.push_back({a, b, PeerCopyStatus::passed, rate, rate, ""});
    return results;
}

}  // namespace

TEST_CASE("the built-in policy weighs every pod signal as the issue asks", "[pod][policy]") {
    const HealthPolicy& policy = builtin().policy;
    for (const auto& key : health::pod_signals()) CHECK(policy.levels.count(key) == 1);
    CHECK(policy.level("p2p_unavailable") == HealthLevel::ok);
    CHECK(policy.level("mixed_gpus") == HealthLevel::ok);
    for (const char* key : {"p2p_broken", "p2p_slow", "nvlink_inactive", "pcie_degraded", "shm_too_small",
                            "memlock_limited"})
        CHECK(policy.level(key) == HealthLevel::degraded);
}

TEST_CASE("links: every pair that passed at speed is ok, and nothing is written for NCCL", "[pod][links]") {
    const Inventory inventory = hgx(8);
    const auto judgement = judge_links(inventory, measured(all_passed(8, 371.0)), builtin());
    REQUIRE(judgement.links.size() == 28);
    for (const auto& link : judgement.links) CHECK(link.state == LinkState::ok);
    CHECK(judgement.findings.empty());
    // NVLink 4, 18 links: the recipes' 20.6 GB/s a link.
    REQUIRE(judgement.links[0].expected);
    CHECK(judgement.links[0].expected->gb_per_s == Approx(370.8));
    CHECK(judgement.links[0].expected->basis == "NVLink 4, 18 links");
    const auto plan = plan_peer_access_settings(judgement.links, {&builtin().pod.p2p_settings}, UserValues({}));
    CHECK(plan.state == PeerAccessState::works);
    CHECK(written(plan.settings).empty());
    CHECK(plan.why.empty());
}

TEST_CASE("links: a hung, failed or corrupting copy is p2p_broken, naming the pair and what happened", "[pod][links]") {
    const Inventory inventory = hgx(4);
    auto results = all_passed(4, 370.0);
    results[1] = {0, 2, PeerCopyStatus::wrong_bytes, 370.0, 368.0, "offset 4096: 0x00 where 0x5a was sent"};
    results[4] = {3, 1, PeerCopyStatus::timeout, 0, 0, "no answer within 5 s"};  // stored the other way round
    results[5] = {2, 3, PeerCopyStatus::error, 0, 0, "peer access could not be enabled (error 217)"};
    const auto judgement = judge_links(inventory, measured(results), builtin());
    CHECK(judgement.links[1].state == LinkState::broken);
    CHECK(judgement.links[4].state == LinkState::broken);
    CHECK(judgement.links[4].pair.first == 1);
    CHECK(judgement.links[4].check->first == 1);  // oriented as the pair
    CHECK(judgement.links[5].state == LinkState::broken);
    CHECK(judgement.links[0].state == LinkState::ok);
    const auto broken = with_signal(judgement.findings, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(broken[0]->level == HealthLevel::degraded);
    CHECK(contains(broken[0]->words, "0 and 2 (NV18): wrong-bytes (offset 4096: 0x00 where 0x5a was sent)"));
    CHECK(contains(broken[0]->words, "1 and 3 (NV18): timeout"));
    CHECK(contains(broken[0]->words, "2 and 3 (NV18): error (peer access could not be enabled (error 217))"));
    // NVLink pairs broken: peer copies off altogether.
    const auto plan = plan_peer_access_settings(judgement.links, {&builtin().pod.p2p_settings}, UserValues({}));
    CHECK(plan.state == PeerAccessState::broken);
    CHECK(written(plan.settings) == std::vector<std::pair<std::string, std::string>>{{"NCCL_P2P_DISABLE", "1"}});
    CHECK(contains(plan.why, "written: NCCL_P2P_DISABLE=1"));
}

TEST_CASE("links: a passed copy under the share of its path's figure is p2p_slow", "[pod][links]") {
    const Inventory inventory = hgx(2);
    // 37 GB/s: an H100 pair with P2P off (NVIDIA/nccl#1264), a tenth of NV18's figure.
    auto judgement = judge_links(inventory, measured({{0, 1, PeerCopyStatus::passed, 371.0, 37.0, ""}}), builtin());
    REQUIRE(judgement.links.size() == 1);
    CHECK(judgement.links[0].state == LinkState::slow);
    auto slow = with_signal(judgement.findings, "p2p_slow");
    REQUIRE(slow.size() == 1);
    CHECK(contains(slow[0]->words, "0 and 1 (NV18): 371.0 and 37.0 GB/s, under 50% of the 370.8 GB/s NVLink 4, 18 "
                                   "links give"));
    // Just above the share is not slow.
    judgement = judge_links(inventory, measured({{0, 1, PeerCopyStatus::passed, 186.0, 186.0, ""}}), builtin());
    CHECK(judgement.links[0].state == LinkState::ok);
    // A slow link is not broken: NCCL is told nothing.
    CHECK(plan_peer_access_settings(judgement.links, {&builtin().pod.p2p_settings}, UserValues({})).state ==
          PeerAccessState::works);
}

TEST_CASE("links: PCIe pairs are held against the slower GPU's link at its maximum", "[pod][links]") {
    Inventory inventory = pcie_pod(2, "NVIDIA L4", "570.133.20", LinkPath::phb, PeerAccess::ok);
    inventory.gpus[1].pcie = PcieLink{3, 16, 3, 16};  // a Gen3 slot
    const auto expected = expected_peer_bandwidth(inventory.pairs[0], inventory.gpus[0], inventory.gpus[1],
                                                  builtin().pod);
    REQUIRE(expected);
    CHECK(expected->gb_per_s == Approx(11.0));
    CHECK(expected->basis == "PCIe Gen3 x16");
    // About 10 GB/s with P2P where host memory gives 22 (NVIDIA/nccl#814), on Gen4: slow.
    inventory.gpus[1].pcie = PcieLink{4, 16, 4, 16};
    const auto judgement =
        judge_links(inventory, measured({{0, 1, PeerCopyStatus::passed, 10.2, 9.8, ""}}), builtin());
    CHECK(judgement.links[0].state == LinkState::slow);
    // Without PCIe figures there is nothing to hold the copy against.
    inventory.gpus[0].pcie.reset();
    CHECK(judge_links(inventory, measured({{0, 1, PeerCopyStatus::passed, 1.0, 1.0, ""}}), builtin()).links[0].state ==
          LinkState::ok);
}

TEST_CASE("links: no peer access is p2p_unavailable (ok), unknown stays unknown", "[pod][links]") {
    Inventory inventory = pcie_pod(3, "NVIDIA L4", "570.133.20", LinkPath::sys, PeerAccess::topology_not_supported);
    inventory.pairs[2].p2p = PeerAccess::unknown;
    const auto judgement = judge_links(inventory, not_run(), builtin());
    CHECK(judgement.links[0].state == LinkState::unavailable);
    CHECK(judgement.links[2].state == LinkState::unknown);
    const auto unavailable = with_signal(judgement.findings, "p2p_unavailable");
    REQUIRE(unavailable.size() == 1);
    CHECK(unavailable[0]->level == HealthLevel::ok);
    CHECK(contains(unavailable[0]->words, "0 and 1 (SYS): topology-not-supported; 0 and 2 (SYS): "
                                          "topology-not-supported: NCCL moves their data through host memory"));
    CHECK_FALSE(contains(unavailable[0]->words, "1 and 2"));
}

TEST_CASE("links: CUDA refusing peer access makes a pair p2p_unavailable, whatever NVML says", "[pod][links]") {
    const Inventory inventory = hgx(2);
    PeerCopyResult refused{0, 1, PeerCopyStatus::skipped, 0, 0, "cuDeviceCanAccessPeer: 0", false};
    const auto judgement = judge_links(inventory, measured({refused}), builtin());
    CHECK(judgement.links[0].state == LinkState::unavailable);
    const auto unavailable = with_signal(judgement.findings, "p2p_unavailable");
    REQUIRE(unavailable.size() == 1);
    CHECK(contains(unavailable[0]->words, "0 and 1 (NV18): CUDA refuses"));
    // A skipped pair CUDA allows is left to NVML.
    refused.cuda_peer_access = true;
    CHECK(judge_links(inventory, measured({refused}), builtin()).links[0].state == LinkState::ok);
}

TEST_CASE("links: where no copy ran, the recipes' known-broken table decides, and says it was not measured",
          "[pod][links][known-broken]") {
    // accelerate: 2+ "RTX 40" on a driver older than 550.40.07.
    const Inventory old_driver =
        pcie_pod(2, "NVIDIA GeForce RTX 4090", "535.129.03", LinkPath::phb, PeerAccess::ok);
    auto judgement = judge_links(old_driver, not_run(), builtin());
    CHECK(judgement.links[0].state == LinkState::known_broken);
    REQUIRE(judgement.links[0].rule);
    CHECK(contains(judgement.links[0].rule->source, "huggingface/accelerate"));
    auto broken = with_signal(judgement.findings, "p2p_broken");
    REQUIRE(broken.size() == 1);
    CHECK(contains(broken[0]->words, "NVIDIA GeForce RTX 4090 on driver 535.129.03 is known to hang or corrupt"));
    CHECK(contains(broken[0]->words, "not measured (disabled (--no-validate))"));
    CHECK(written(plan_peer_access_settings(judgement.links, {&builtin().pod.p2p_settings}, UserValues({})).settings) ==
          std::vector<std::pair<std::string, std::string>>{{"NCCL_P2P_DISABLE", "1"}});

    // The fixed driver: the rule does not apply.
    const Inventory fixed = pcie_pod(2, "NVIDIA GeForce RTX 4090", "550.40.07", LinkPath::phb, PeerAccess::ok);
    CHECK(judge_links(fixed, not_run(), builtin()).links[0].state == LinkState::ok);
    // One GPU: no pair at all.
    CHECK(judge_links(pcie_pod(1, "NVIDIA GeForce RTX 4090", "535.129.03", LinkPath::phb, PeerAccess::ok), not_run(),
                      builtin())
              .links.empty());
    // A measured copy beats the table.
    judgement = judge_links(old_driver, measured({{0, 1, PeerCopyStatus::passed, 20.0, 20.0, ""}}), builtin());
    CHECK(judgement.links[0].state == LinkState::ok);
    // A pair without peer access is unavailable, not broken.
    const Inventory refused =
        pcie_pod(2, "NVIDIA GeForce RTX 4090", "535.129.03", LinkPath::phb, PeerAccess::not_supported);
    CHECK(judge_links(refused, not_run(), builtin()).links[0].state == LinkState::unavailable);
}

TEST_CASE("links: axolotl's rule holds for 2 to 7 L40S or RTX 6000 Ada, not for 8", "[pod][links][known-broken]") {
    for (const int count : {2, 7}) {
        INFO(count);
        const Inventory pod = pcie_pod(count, "NVIDIA L40S", "570.133.20", LinkPath::pix, PeerAccess::ok);
        CHECK(judge_links(pod, not_run(), builtin()).links[0].state == LinkState::known_broken);
    }
    const Inventory eight = pcie_pod(8, "NVIDIA RTX 6000 Ada Generation", "570.133.20", LinkPath::pix, PeerAccess::ok);
    CHECK(judge_links(eight, not_run(), builtin()).links[0].state == LinkState::ok);
    const Inventory ada = pcie_pod(2, "NVIDIA RTX 6000 Ada Generation", "570.133.20", LinkPath::pix, PeerAccess::ok);
    CHECK(judge_links(ada, not_run(), builtin()).links[0].state == LinkState::known_broken);
}

TEST_CASE("links: on a simulated machine every pair's check is skipped (simulated)", "[pod][links]") {
    Inventory inventory = hgx(2);
    inventory.source = InventorySource::fixture;
    CopyChecks checks;
    checks.run = CopyCheckRun::simulated;
    const auto judgement = judge_links(inventory, checks, builtin());
    REQUIRE(judgement.links[0].check);
    CHECK(judgement.links[0].check->status == PeerCopyStatus::skipped);
    CHECK(judgement.links[0].check->detail == "simulated");
    CHECK(judgement.links[0].state == LinkState::ok);
}

TEST_CASE("NCCL: broken PCIe pairs while NVLink pairs pass keep NVLink (NCCL_P2P_LEVEL=NVL)", "[pod][nccl]") {
    // Four GPUs, NVLink bridges on 0-1 and 2-3, PCIe between the bridges.
    Inventory inventory = hgx(4);
    for (auto& pair : inventory.pairs)
        if (pair.first / 2 != pair.second / 2) pair = {pair.first, pair.second, LinkPath::sys, 0, PeerAccess::ok};
    std::vector<PeerCopyResult> results;
    for (const auto& pair : inventory.pairs)
        results.push_back({pair.first, pair.second,
                           pair.path == LinkPath::nvlink ? PeerCopyStatus::passed : PeerCopyStatus::timeout, 370, 370,
                           ""});
    const auto judgement = judge_links(inventory, measured(results), builtin());
    CHECK(peer_access_state(judgement.links) == PeerAccessState::pcie_broken);
    const RecipeSet& recipes = builtin();
    const WorkloadSpec& vllm = recipes.workloads.at("vllm");
    auto plan = plan_peer_access_settings(judgement.links, {&recipes.pod.p2p_settings, &vllm.p2p_settings}, UserValues({}));
    CHECK(written(plan.settings) == std::vector<std::pair<std::string, std::string>>{{"NCCL_P2P_LEVEL", "NVL"},
                                                                         {"VLLM_SKIP_P2P_CHECK", "0"}});
    CHECK(contains(plan.why, "broken between GPUs joined by PCIe (0 and 2, 0 and 3, 1 and 2, 1 and 3) while NVLink "
                             "pairs pass"));

    // The user's own NCCL setting stays, and the plan says so; the vLLM table is decided on its own.
    plan = plan_peer_access_settings(judgement.links, {&recipes.pod.p2p_settings, &vllm.p2p_settings},
                                     UserValues(std::map<std::string, std::string>{{"NCCL_P2P_LEVEL", "SYS"}}));
    CHECK(written(plan.settings) == std::vector<std::pair<std::string, std::string>>{{"VLLM_SKIP_P2P_CHECK", "0"}});
    REQUIRE(kept(plan.settings).size() == 1);
    CHECK(kept(plan.settings)[0].name == "NCCL_P2P_LEVEL");
    CHECK(kept(plan.settings)[0].value == "SYS");
    CHECK(kept(plan.settings)[0].recipe_value == "NVL");
    CHECK(contains(plan.why, "the environment's NCCL_P2P_LEVEL=SYS stays, so provision's NCCL_P2P_LEVEL=NVL is not "
                             "written"));
    EnvSettings env;
    UserValues::apply(plan.settings, env);
    CHECK(env.get("NCCL_P2P_LEVEL") == "SYS");
    CHECK(env.is_kept("NCCL_P2P_LEVEL"));

    // A user who turned P2P off already: nothing is written in its place.
    plan = plan_peer_access_settings(judgement.links, {&recipes.pod.p2p_settings}, UserValues(std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}}));
    CHECK(written(plan.settings).empty());
    CHECK(kept(plan.settings).empty());
    CHECK(contains(plan.why, "the environment's NCCL_P2P_DISABLE=1 stays, so provision's NCCL_P2P_LEVEL=NVL is not "
                             "written"));
}

TEST_CASE("NCCL: broken pairs without any NVLink pair turn peer copies off", "[pod][nccl]") {
    const Inventory inventory = pcie_pod(2, "NVIDIA L4", "570.133.20", LinkPath::pix, PeerAccess::ok);
    const auto judgement =
        judge_links(inventory, measured({{0, 1, PeerCopyStatus::wrong_bytes, 0, 0, "zeros"}}), builtin());
    CHECK(peer_access_state(judgement.links) == PeerAccessState::broken);
}

TEST_CASE("nvlink_inactive: fewer active links than the GPU has, or than its model's others", "[pod][nvlink]") {
    Inventory inventory = hgx(4);
    inventory.gpus[1].nvlinks = NvLinkCount{18, 16};
    inventory.gpus[3].nvlinks = NvLinkCount{12, 12};
    const auto findings = judge_nvlinks(inventory, builtin().policy);
    REQUIRE(findings.size() == 2);
    CHECK(findings[0].gpu == 1);
    CHECK(findings[0].level == HealthLevel::degraded);
    CHECK(contains(findings[0].words, "GPU 1 (NVIDIA H100 80GB HBM3) has 16 of its 18 NVLinks active"));
    CHECK(findings[1].gpu == 3);
    CHECK(contains(findings[1].words, "has 12 active NVLinks where another NVIDIA H100 80GB HBM3 in this pod has 18"));
    // A pod of one GPU copies to no peer: its links down say nothing.
    Inventory alone = hgx(1);
    alone.gpus[0].nvlinks = NvLinkCount{18, 12};
    CHECK(judge_nvlinks(alone, builtin().policy).empty());
    // GPUs without NVLink say nothing.
    CHECK(judge_nvlinks(pcie_pod(2, "NVIDIA L4", "570.133.20", LinkPath::pix, PeerAccess::ok), builtin().policy)
              .empty());
}

TEST_CASE("mixed_gpus names the models and the GPU that limits the selection", "[pod][models]") {
    Inventory inventory = hgx(3);
    inventory.gpus[2] = gpu_of(2, "NVIDIA A100-SXM4-80GB", {8, 0}, "ampere");
    const auto findings = judge_gpu_models(inventory, builtin().policy);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].signal == "mixed_gpus");
    CHECK(findings[0].level == HealthLevel::ok);
    CHECK(findings[0].gpu == 2);
    CHECK(contains(findings[0].words, "GPUs of 2 models: NVIDIA H100 80GB HBM3 (GPUs 0, 1); NVIDIA A100-SXM4-80GB "
                                      "(GPU 2); GPU 2 (NVIDIA A100-SXM4-80GB, compute capability 8.0, ampere) is the "
                                      "least capable"));
    CHECK(judge_gpu_models(hgx(8), builtin().policy).empty());
}

TEST_CASE("pcie_degraded: width below its maximum, generation only from a busy reading, slow host copies",
          "[pod][pcie]") {
    Inventory inventory = hgx(3);
    inventory.gpus[0].pcie = PcieLink{5, 8, 5, 16};  // a riser at x8
    inventory.gpus[1].pcie = PcieLink{1, 16, 5, 16};  // idle: trained down to save power
    // Without a busy reading, an idle GPU's generation is not judged.
    auto findings = judge_host_links(inventory, not_run(), builtin());
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].gpu == 0);
    CHECK(contains(findings[0].words, "its PCIe link runs at x8 of x16"));

    // Read right after the copies: GPU 1 stays at Gen3, GPU 2's copies crawl.
    CopyChecks checks = measured({}, {{0, 26.0, 26.5, PcieLink{5, 8, 5, 16}},
                                      {1, 24.0, 23.0, PcieLink{3, 16, 5, 16}},
                                      {2, 20.1, 52.0, PcieLink{5, 16, 5, 16}}});
    findings = judge_host_links(inventory, checks, builtin());
    REQUIRE(findings.size() == 3);
    CHECK(findings[1].gpu == 1);
    CHECK(contains(findings[1].words, "its PCIe link runs at Gen3 of Gen5 while busy"));
    CHECK(contains(findings[1].words, "pinned host to device copies ran at 24.0 GB/s, under 50% of the 52.0 GB/s PCIe "
                                      "Gen5 x16 give (an estimate)"));
    CHECK(findings[2].gpu == 2);
    CHECK(contains(findings[2].words, "host to device copies ran at 20.1 GB/s"));
    CHECK_FALSE(contains(findings[2].words, "device to host"));
    // GPU 0 at x8: 26 GB/s is half its x16 figure, not under it.
    CHECK_FALSE(contains(findings[0].words, "copies ran"));

    // A fixture's figures stand for a busy reading.
    inventory.source = InventorySource::fixture;
    findings = judge_host_links(inventory, not_run(), builtin());
    REQUIRE(findings.size() == 2);
    CHECK(contains(findings[1].words, "Gen1 of Gen5 while busy"));
}

TEST_CASE("the container: /dev/shm missing or under the floor, memlock only with RDMA devices", "[pod][container]") {
    const PodRecipe& recipe = builtin().pod;
    CHECK(recipe.shm_min_bytes == 1024ull * 1024 * 1024);
    ContainerLimits limits;
    limits.shm_bytes = 64ull << 20;  // Docker's default
    auto findings = judge_container(limits, recipe, builtin().policy);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].signal == "shm_too_small");
    CHECK(contains(findings[0].words, "/dev/shm holds 64 MiB, under the 1 GiB"));
    CHECK(contains(findings[0].words, "--shm-size=1g or --ipc=host"));
    CHECK(contains(findings[0].words, "emptyDir with medium: Memory at /dev/shm"));

    limits.shm_bytes.reset();
    findings = judge_container(limits, recipe, builtin().policy);
    REQUIRE(findings.size() == 1);
    CHECK(contains(findings[0].words, "this container has no /dev/shm"));

    // A tmpfs without a size limit (size=0) is no small /dev/shm.
    limits.shm_unlimited = true;
    CHECK(judge_container(limits, recipe, builtin().policy).empty());
    limits.shm_unlimited = false;

    limits.shm_bytes = 1ull << 30;
    CHECK(judge_container(limits, recipe, builtin().policy).empty());
    limits.rdma_devices = {"mlx5_0", "mlx5_1"};
    limits.memlock_read = true;
    limits.memlock_bytes = 8ull << 20;
    findings = judge_container(limits, recipe, builtin().policy);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].signal == "memlock_limited");
    CHECK(contains(findings[0].words, "RLIMIT_MEMLOCK is 8 MiB with RDMA devices present (mlx5_0, mlx5_1)"));
    CHECK(contains(findings[0].words, "--ulimit memlock=-1"));
    limits.memlock_bytes.reset();  // unlimited
    CHECK(judge_container(limits, recipe, builtin().policy).empty());
}

TEST_CASE("the container's limits come from the real system calls", "[pod][container]") {
    test_support::TempDir dir;
    std::filesystem::create_directories(dir.path() + "/infiniband/mlx5_0");
    const ContainerLimits limits = read_container_limits({dir.path(), dir.path() + "/infiniband"});
    REQUIRE(limits.shm_bytes);
    CHECK(*limits.shm_bytes > 0);
    CHECK(limits.rdma_devices == std::vector<std::string>{"mlx5_0"});
    CHECK(limits.memlock_read);
    const ContainerLimits missing = read_container_limits({dir.path() + "/none", dir.path() + "/none"});
    CHECK_FALSE(missing.shm_bytes);
    CHECK(missing.rdma_devices.empty());
    CHECK_FALSE(missing.memlock_read);  // not read without RDMA devices
    CHECK(byte_size_words(1536ull << 20) == "1.5 GiB");
    CHECK(byte_size_words(512) == "512 bytes");
}

TEST_CASE("judge_pod puts it together: findings in order, settings planned, host copies kept", "[pod]") {
    Inventory inventory = hgx(2);
    inventory.gpus[1] = gpu_of(1, "NVIDIA A100-SXM4-80GB", {8, 0}, "ampere");
    const CopyChecks checks = measured({{0, 1, PeerCopyStatus::wrong_bytes, 0, 0, "stale"}}, {{0, 50.0, 50.0, {}}});
    ContainerLimits limits;
    limits.shm_bytes = 64ull << 20;
    const RecipeSet& recipes = builtin();
    const PodReport pod = judge_pod(inventory, recipes, recipes.workloads.at("generic"), checks, limits, {}, {}, UserValues({}));
    std::vector<std::string> signals;
    for (const auto& finding : pod.findings) signals.push_back(finding.signal);
    CHECK(signals == std::vector<std::string>{"p2p_broken", "mixed_gpus", "shm_too_small"});
    CHECK(pod.host_copies.size() == 1);
    CHECK(written(pod.peer_access.settings) == std::vector<std::pair<std::string, std::string>>{{"NCCL_P2P_DISABLE", "1"}});
}
