// Multi-node NVLink: NVML's fabric structs read, healthMask's 2-bit fields,
// /proc/devices, the IMEX channel folder, the cliques and when NCCL would
// check them, and the findings and settings that follow.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <map>

#include <unistd.h>

#include "fabric/fabric_judgement.h"
#include "fabric/fabric_plan.h"
#include "fabric/imex_channels.h"
#include "gpu/nvml_fabric.h"
#include "nccl/mnnvl_settings.h"

using namespace provision;

namespace {

constexpr unsigned char kCluster[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

GpuFabric completed(unsigned clique, std::string cluster = "deadbeef0102030405060708090a0b0c") {
    GpuFabric fabric;
    fabric.state = FabricState::completed;
    fabric.cluster_uuid = std::move(cluster);
    fabric.clique_id = clique;
    fabric.version = 3;
    fabric.health_mask = 0xaa;
    fabric.health = FabricHealth::healthy;
    return fabric;
}

Inventory tray(int gpus, const GpuFabric& fabric) {
    Inventory inventory;
    inventory.source = InventorySource::driver;
    for (int i = 0; i < gpus; ++i) {
        Gpu gpu;
        gpu.index = i;
        gpu.nvml_index = i;
        gpu.fabric = fabric;
        inventory.gpus.push_back(gpu);
    }
    return inventory;
}

NcclPaths cumem() {
    NcclPaths paths;
    paths.peer = PeerPath::cumem_fd;
    return paths;
}

HealthPolicy policy() {
    HealthPolicy policy;
    for (const char* signal : {"fabric_unhealthy", "imex_channel_missing", "mnnvl_handle_failed", "nccl_known_defect"})
        policy.levels[signal] = HealthLevel::degraded;
    return policy;
}

NcclLibrary nccl(const std::string& version) {
    NcclLibrary library;
    library.version = version;
    return library;
}

const Finding* find(const FabricReport& report, const std::string& signal) {
    for (const auto& finding : report.findings)
        if (finding.signal == signal) return &finding;
    return nullptr;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("NVML's fabric structs v1 to v4 read into one fabric", "[fabric]") {
    nvml::GpuFabricInfo v1{};
    std::memcpy(v1.cluster_uuid, kCluster, 16);
    v1.state = 3;
    v1.clique_id = 7;
    auto fabric = fabric_from(v1);
    REQUIRE(fabric);
    CHECK(fabric->version == 1);
    CHECK(fabric->cluster_uuid == "deadbeef0102030405060708090a0b0c");
    CHECK(fabric->clique_id == 7);
    CHECK_FALSE(fabric->health_mask);
    CHECK(fabric->multi_node());

    nvml::GpuFabricInfoV3 v3{};
    v3.state = 3;
    v3.health_mask = 0xaa;
    v3.health_summary = 3;
    fabric = fabric_from(v3);
    REQUIRE(fabric);
    CHECK_FALSE(fabric->multi_node());  // a zero cluster UUID: HGX H100/H200
    CHECK(fabric->cluster_uuid.empty());
    CHECK(fabric->health == FabricHealth::limited_capacity);

    nvml::GpuFabricInfoV4 v4{};
    std::memcpy(v4.cluster_uuid, kCluster, 16);
    v4.state = 3;
    v4.num_cliques = 2;
    v4.cliques[0] = {2, 99};
    v4.cliques[1] = {0, 5};
    fabric = fabric_from(v4);
    REQUIRE(fabric);
    CHECK(fabric->cliques.size() == 2);
    CHECK(fabric->clique_id == 5);  // NCCL's clique: the unicast one
    v4.num_cliques = 1000;          // a count past the array is cut to it
    CHECK(fabric_from(v4)->cliques.size() == nvml::gpu_fabric_clique_max);

    v1.state = 9;
    CHECK_FALSE(fabric_from(v1));
}

TEST_CASE("healthMask is 2-bit fields: 0xaa is healthy", "[fabric]") {
    CHECK(fabric_health_problems(0xaa).empty());
    CHECK(fabric_health_problems(0).empty());  // nothing supported: nothing said
    CHECK(fabric_health_problems(0xa9) == std::vector<std::string>{"bandwidth degraded"});
    CHECK(fabric_health_problems(0x9a) == std::vector<std::string>{"route unhealthy"});
    CHECK(fabric_health_problems(0x1aa).empty());  // configuration: none
    CHECK(fabric_health_problems(0x5aa) == std::vector<std::string>{"incorrect configuration: too few NVLinks"});
}

TEST_CASE("/proc/devices gives the IMEX channels' major under Character devices", "[fabric]") {
    CHECK(imex_major_from_proc_devices("Character devices:\n  1 mem\n235 nvidia-caps-imex-channels\n\nBlock devices:\n") ==
          235u);
    CHECK_FALSE(imex_major_from_proc_devices("Character devices:\n  1 mem\n195 nvidia\n"));
    CHECK_FALSE(imex_major_from_proc_devices("Block devices:\n235 nvidia-caps-imex-channels\n"));
    CHECK_FALSE(imex_major_from_proc_devices("Character devices:\n235 nvidia-caps-imex-channels-x\n"));
    CHECK_FALSE(imex_major_from_proc_devices("Character devices:\n99999999999 nvidia-caps-imex-channels\n"));
}

TEST_CASE("IMEX channels: a character device of the listed major that opens is usable", "[fabric]") {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("provision-imex-" + std::to_string(::getpid()));
    fs::create_directories(root / "proc");
    fs::create_directories(root / "dev/nvidia-caps-imex-channels");
    std::ofstream(root / "proc/devices") << "Character devices:\n  1 mem\n";  // /dev/null's major: 1
    fs::create_symlink("/dev/null", root / "dev/nvidia-caps-imex-channels/channel0");
    std::ofstream(root / "dev/nvidia-caps-imex-channels/channel10") << "";
    auto imex = read_imex_channels((root / "proc").string(), (root / "dev").string());
    CHECK_FALSE(imex.major);  // not listed: the channel's major is not checked
    REQUIRE(imex.channels.size() == 2);
    CHECK(imex.channels[0].name == "channel0");
    CHECK(imex.channels[0].usable);
    CHECK_FALSE(imex.channels[1].usable);
    CHECK(imex.channels[1].detail == "not a character device");

    std::ofstream(root / "proc/devices") << "Character devices:\n  2 nvidia-caps-imex-channels\n";
    imex = read_imex_channels((root / "proc").string(), (root / "dev").string());
    CHECK(imex.major == 2u);
    CHECK_FALSE(imex.channels[0].usable);  // /dev/null is major 1
    CHECK(has(imex.channels[0].detail, "major 1"));
    CHECK_FALSE(imex.any_usable());

    imex = read_imex_channels((root / "none").string(), (root / "none").string());
    CHECK_FALSE(imex.folder);
    CHECK(imex.channels.empty());
    fs::remove_all(root);
}

TEST_CASE("NCCL_MNNVL_* are read as NCCL reads its parameters", "[fabric][nccl]") {
    CHECK(mnnvl_settings(std::nullopt, std::nullopt, std::nullopt).enable == 2);
    CHECK_FALSE(mnnvl_settings(std::nullopt, std::nullopt, std::nullopt).enable_set);
    CHECK(mnnvl_settings(std::string("0"), std::nullopt, std::nullopt).off());
    CHECK(mnnvl_settings(std::string("no"), std::nullopt, std::nullopt).off());  // strtoll: no number is 0
    CHECK(mnnvl_settings(std::string(""), std::nullopt, std::nullopt).enable == 2);
    const auto set = mnnvl_settings(std::string("1"), std::string("0x10"), std::string("-1"));
    CHECK(set.uuid == 16);
    CHECK_FALSE(set.clique_id);  // -1: NVML's
}

TEST_CASE("no multi-node NVLink where a cluster UUID is zero or a fabric is not set up", "[fabric]") {
    const MnnvlSettings defaults;
    CHECK_FALSE(plan_fabric(tray(8, completed(0, "")), cumem(), true, defaults, 1).ran);  // HGX H100
    GpuFabric in_progress = completed(3);
    in_progress.state = FabricState::in_progress;
    CHECK_FALSE(plan_fabric(tray(4, in_progress), cumem(), true, defaults, 1).ran);
    Inventory none = tray(2, completed(3));
    none.gpus[1].fabric.reset();
    CHECK_FALSE(plan_fabric(none, cumem(), true, defaults, 1).ran);
}

TEST_CASE("a GB200 tray: one clique, NCCL checks where two GPUs of the job share it", "[fabric]") {
    const MnnvlSettings defaults;
    auto plan = plan_fabric(tray(4, completed(3)), cumem(), true, defaults, 1);
    REQUIRE(plan.ran);
    REQUIRE(plan.cliques.size() == 1);
    CHECK(plan.cliques[0].gpus == std::vector<int>{0, 1, 2, 3});
    CHECK(plan.job_clique_gpus == 4);
    CHECK(plan.nccl_checks);

    CHECK_FALSE(plan_fabric(tray(1, completed(3)), cumem(), true, defaults, 1).nccl_checks);
    plan = plan_fabric(tray(1, completed(3)), cumem(), true, defaults, 18);  // a job over 18 trays
    CHECK(plan.nccl_checks);
    CHECK(plan.job_clique_gpus == 18);

    CHECK_FALSE(plan_fabric(tray(4, completed(3)), NcclPaths{}, true, defaults, 1).nccl_checks);  // legacy IPC
    CHECK_FALSE(plan_fabric(tray(4, completed(3)), cumem(), false, defaults, 1).nccl_checks);     // no NCCL
    CHECK_FALSE(plan_fabric(tray(4, completed(3)),
                            cumem(), true, mnnvl_settings(std::string("0"), std::nullopt, std::nullopt), 1)
                    .nccl_checks);
    // NCCL_MNNVL_CLIQUE_ID replaces NVML's clique for every GPU.
    Inventory split = tray(2, completed(3));
    split.gpus[1].fabric->clique_id = 4;
    CHECK(plan_fabric(split, cumem(), true, defaults, 1).cliques.size() == 2);
    CHECK(plan_fabric(split, cumem(), true, mnnvl_settings(std::nullopt, std::nullopt, std::string("9")), 1)
              .cliques.size() == 1);
}

TEST_CASE("a failed fabric handle writes NCCL_MNNVL_ENABLE=0, unless the user set it", "[fabric]") {
    const Inventory inventory = tray(4, completed(3));
    auto report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 1);
    const std::vector<FabricHandleCheck> failed = {
        {0, FabricHandleStatus::failed, 800, "cuMemCreate (CU_MEM_HANDLE_TYPE_FABRIC): CUDA error 800"},
        {1, FabricHandleStatus::passed, 0, "ok"}};
    judge_fabric(report, inventory, nccl("2.28.9"), failed, PodRecipe{}, policy(), UserValues(std::map<std::string, std::string>{}), false);
    const Finding* finding = find(report, "mnnvl_handle_failed");
    REQUIRE(finding);
    CHECK(has(finding->words, "NCCL 2.28.9 would stop the job"));
    CHECK(has(finding->words, "NCCL_MNNVL_ENABLE=0 is written"));
    CHECK(has(finding->words, "no IMEX channel"));
    CHECK(report.proven == false);
    EnvSettings env;
    add_fabric_settings(report, env);
    CHECK(env.get("NCCL_MNNVL_ENABLE") == std::optional<std::string>("0"));

    report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 1);
    judge_fabric(report, inventory, nccl("2.28.9"), failed, PodRecipe{}, policy(),
                 UserValues(std::map<std::string, std::string>{{"NCCL_MNNVL_ENABLE", "1"}}), false);
    CHECK(has(find(report, "mnnvl_handle_failed")->words, "the environment's NCCL_MNNVL_ENABLE=1 stays"));

    report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 1);
    judge_fabric(report, inventory, nccl("2.28.9"), {{0, FabricHandleStatus::passed, 0, "ok"}}, PodRecipe{}, policy(),
                 UserValues(std::map<std::string, std::string>{}), false);
    CHECK(report.proven == true);
    CHECK(report.findings.empty());
    CHECK(report.decided.empty());
}

TEST_CASE("a known NCCL defect matches its versions and clique size; its workaround only when asked", "[fabric]") {
    PodRecipe recipe;
    recipe.nccl_defects.push_back({"mnnvl_large_clique_crash", {"2.30.4"}, 40, {{"NCCL_MNNVL_ENABLE", "0"}}, "NVIDIA/nccl#2186"});
    const Inventory inventory = tray(4, completed(3));
    auto report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 18);  // 72 GPUs
    judge_fabric(report, inventory, nccl("2.30.4"), {}, recipe, policy(), UserValues(std::map<std::string, std::string>{}), false);
    REQUIRE(find(report, "nccl_known_defect"));
    CHECK(has(find(report, "nccl_known_defect")->words, "written with --apply-workarounds"));
    CHECK(report.decided.empty());

    report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 18);
    judge_fabric(report, inventory, nccl("2.30.4"), {}, recipe, policy(), UserValues(std::map<std::string, std::string>{}), true);
    CHECK(has(find(report, "nccl_known_defect")->words, "NCCL_MNNVL_ENABLE=0 is written"));
    REQUIRE(report.decided.size() == 1);

    report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 9);  // 36 GPUs: under 40
    judge_fabric(report, inventory, nccl("2.30.4"), {}, recipe, policy(), UserValues(std::map<std::string, std::string>{}), true);
    CHECK_FALSE(find(report, "nccl_known_defect"));
    report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 18);
    judge_fabric(report, inventory, nccl("2.28.9"), {}, recipe, policy(), UserValues(std::map<std::string, std::string>{}), true);
    CHECK_FALSE(find(report, "nccl_known_defect"));
}

TEST_CASE("an unhealthy fabric is a finding of its GPU", "[fabric]") {
    GpuFabric unhealthy = completed(3);
    unhealthy.health = FabricHealth::unhealthy;
    unhealthy.health_mask = 0x9a;
    Inventory inventory = tray(2, completed(3));
    inventory.gpus[1].fabric = unhealthy;
    auto report = plan_fabric(inventory, cumem(), true, MnnvlSettings{}, 1);
    judge_fabric(report, inventory, nccl("2.28.9"), {}, PodRecipe{}, policy(), UserValues(std::map<std::string, std::string>{}), false);
    const Finding* finding = find(report, "fabric_unhealthy");
    REQUIRE(finding);
    CHECK(finding->gpu == 1);
    CHECK(has(finding->words, "unhealthy (route unhealthy)"));
}
