// What each finding asks to be done: every signal has its row, and the
// rows' words come out filled with what the run measured.
#include <catch2/catch.hpp>

#include <regex>

#include "health/actions.h"
#include "recipe/health_signals.h"

using namespace provision;

namespace {

std::vector<std::string> every_signal() {
    std::vector<std::string> all;
    for (const auto* list : {&health::gpu_signals(), &health::driver_fault_classes(), &health::package_signals(),
                             &health::pod_signals(), &health::network_signals(), &health::fabric_signals()})
        all.insert(all.end(), list->begin(), list->end());
    return all;
}

Finding finding(const std::string& signal, int gpu = 0) { return {gpu, gpu, signal, HealthLevel::degraded, "..."}; }

ActionFacts facts() {
    ActionFacts facts;
    facts.shm_needed_bytes = 16ULL << 30;
    facts.verbs_nodes = {"uverbs0", "uverbs1"};
    facts.torch_wheel = "torch>=2.10 from https://download.pytorch.org/whl/cu130 (CUDA 13.0)";
    facts.driver_cuda = "13.0";
    facts.driver_version = "580.159.04";
    facts.architectures = "9.0";
    return facts;
}

}  // namespace

TEST_CASE("every signal the policy knows has an action row", "[health][actions]") {
    for (const std::string& signal : every_signal()) {
        INFO(signal);
        const ActionRow* row = action_row(signal);
        REQUIRE(row != nullptr);
        // Who acts decides what the row must say.
        if (row->actor == Actor::none) CHECK(row->what.empty());
        else CHECK_FALSE(row->what.empty());
        if (row->actor == Actor::container) {
            CHECK_FALSE(row->docker.empty());
            CHECK_FALSE(row->kubernetes.empty());
        }
        if (row->actor != Actor::node && row->actor != Actor::none) CHECK(row->fleet == FleetAction::none);
    }
}

TEST_CASE("the table names no signal the policy does not know", "[health][actions]") {
    const auto all = every_signal();
    for (const std::string& signal : all) CHECK(action_row(signal)->signal == signal);
    CHECK(action_row("no_such_signal") == nullptr);
    const auto actions = actions_for({finding("no_such_signal")}, facts());
    REQUIRE(actions.size() == 1);
    CHECK(actions[0].actor == Actor::none);
    CHECK(actions[0].fleet == FleetAction::unknown);
}

TEST_CASE("every action's words come out filled", "[health][actions]") {
    const std::regex placeholder(R"(\{[a-z_]+\})");
    for (const std::string& signal : every_signal()) {
        INFO(signal);
        const Action action = actions_for({finding(signal)}, facts()).front();
        CHECK_FALSE(std::regex_search(action.what, placeholder));
        CHECK_FALSE(std::regex_search(action.docker, placeholder));
        CHECK_FALSE(std::regex_search(action.kubernetes, placeholder));
    }
}

TEST_CASE("container actions carry the Docker option and the pod-spec field from what was measured",
          "[health][actions]") {
    const auto actions = actions_for({finding("shm_too_small", -1), finding("memlock_limited", -1),
                                      finding("rdma_devices_hidden", -1), finding("cumem_host_failed")},
                                     facts());
    CHECK(actions[0].actor == Actor::container);
    CHECK(actions[0].docker.find("--shm-size=16g") != std::string::npos);
    CHECK(actions[0].docker.find("--ipc=host") != std::string::npos);
    CHECK(actions[0].kubernetes.find("medium: Memory, sizeLimit: 16Gi") != std::string::npos);
    CHECK(actions[1].docker == "--ulimit memlock=-1");
    CHECK(actions[1].kubernetes.find("IPC_LOCK") != std::string::npos);
    CHECK(actions[2].docker.find("--device /dev/infiniband/uverbs0 --device /dev/infiniband/uverbs1") !=
          std::string::npos);
    CHECK(actions[2].kubernetes.find("DRA") != std::string::npos);
    CHECK(actions[3].docker == "--cap-add SYS_NICE");
    CHECK(actions[3].kubernetes == "securityContext.capabilities.add: [SYS_NICE]");
}

TEST_CASE("/dev/shm's size is rounded up to whole GiB", "[health][actions]") {
    ActionFacts small = facts();
    small.shm_needed_bytes = 1536ULL << 20;
    CHECK(actions_for({finding("shm_too_small", -1)}, small).front().docker.find("--shm-size=2g") == 0);
}

TEST_CASE("RDMA devices present without libibverbs are the image's to fix", "[health][actions]") {
    ActionFacts missing = facts();
    missing.verbs_nodes.clear();
    missing.ibverbs_missing = true;
    const Action action = actions_for({finding("rdma_devices_hidden", -1)}, missing).front();
    CHECK(action.actor == Actor::image);
    CHECK(action.what.find("libibverbs1") != std::string::npos);
}

TEST_CASE("image actions name the wheel that would serve", "[health][actions]") {
    for (const char* signal : {"no_kernel_image", "torch_cpu_build", "ptx_jit_only", "driver_too_old"}) {
        const Action action = actions_for({finding(signal)}, facts()).front();
        CHECK(action.actor == Actor::image);
        CHECK(action.what.find("download.pytorch.org/whl/cu130") != std::string::npos);
    }
}

TEST_CASE("the driver's recovery actions map to NVSentinel's actions", "[health][actions]") {
    const auto fleet = [](const char* signal) { return actions_for({finding(signal)}, facts()).front(); };
    CHECK(fleet("gpu_recovery_reset").fleet == FleetAction::component_reset);
    CHECK(fleet("gpu_recovery_reset").what == "reset GPU 0 (nvidia-smi -r -i 0)");
    CHECK(fleet("gpu_recovery_reboot").fleet == FleetAction::restart_bm);
    CHECK(fleet("gpu_recovery_drain_p2p").fleet == FleetAction::none);
    CHECK(fleet("gpu_recovery_drain_p2p").actor == Actor::job);
    CHECK(fleet("gpu_recovery_drain_reset").fleet == FleetAction::component_reset);
    CHECK(fleet("gpu_recovery_unknown").fleet == FleetAction::unknown);
    CHECK(to_string(FleetAction::component_reset) == "COMPONENT_RESET");
    CHECK(to_string(FleetAction::restart_bm) == "RESTART_BM");
}

TEST_CASE("a critical Xid takes the strongest of NVSentinel's actions for its Xids", "[health][actions]") {
    ActionFacts with_xids = facts();
    with_xids.xids[0] = {63, 119};
    CHECK(actions_for({finding("xid_critical")}, with_xids).front().fleet == FleetAction::component_reset);
    with_xids.xids[0] = {119, 79};
    CHECK(actions_for({finding("xid_critical")}, with_xids).front().fleet == FleetAction::restart_bm);
    CHECK(actions_for({finding("xid_critical")}, with_xids).front().what ==
          "reboot the node (NVSentinel's action for Xid 119, 79)");
    with_xids.xids[0] = {92};
    CHECK(actions_for({finding("xid_critical")}, with_xids).front().fleet == FleetAction::none);
    CHECK(xid_fleet_action(48) == FleetAction::unknown);
}
