// What every finding asks to be done, end to end (docs/DESIGN.md "What to do
// about a finding"): the report's action, the summary's last lines grouped by
// who acts, --explain, and the labels and metrics a remediation controller
// reads; a healthy run asks for nothing.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "publish_support.h"

using e2e::TempDir;
using e2e::findings_of;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One H100 whose [gpus.health] holds `health`.
std::string h100_with(const TempDir& dir, const std::string& name, const std::string& health) {
    e2e::write_file(dir.file(name),
                    "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\n"
                    "compute_capability = \"9.0\"\nmemory_mib = 81559\nuuid = "
                    "\"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n\n[gpus.health]\n" +
                        health + "\n");
    return dir.file(name);
}

e2e::Result run(const TempDir& dir, const std::string& fixture, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"--json", "--gpu-fixture", fixture, "--site-packages", e2e::site_packages("torch-only"),
                                  "--env-file", dir.file("env")};
    args.insert(args.end(), more.begin(), more.end());
    return e2e::provision(args);
}

// The summary's lines after "What to do, by who acts:", up to its closing rule.
std::vector<std::string> action_lines(const std::string& summary) {
    std::vector<std::string> lines;
    const auto start = summary.find("  What to do, by who acts:\n");
    if (start == std::string::npos) return lines;
    std::size_t at = summary.find('\n', start) + 1;
    while (at < summary.size() && summary.compare(at, 4, "    ") == 0) {
        const auto end = summary.find('\n', at);
        lines.push_back(summary.substr(at + 4, end - at - 4));
        at = end + 1;
    }
    return lines;
}

}  // namespace

TEST_CASE("a healthy run has no finding and asks for nothing") {
    TempDir dir;
    const auto result = run(dir, e2e::gpu_fixture("h100"));
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "ok");
    CHECK(report["findings"].empty());
    CHECK_FALSE(has(result.err, "What to do"));
}

TEST_CASE("each recovery action of the driver is a finding with NVSentinel's action for the node") {
    struct Row {
        std::string recovery, signal, actor, fleet, words;
    };
    for (const Row& row : std::vector<Row>{
             {"gpu-reset", "gpu_recovery_reset", "node", "COMPONENT_RESET", "reset GPU 0 (nvidia-smi -r -i 0)"},
             {"node-reboot", "gpu_recovery_reboot", "node", "RESTART_BM", "reboot the node"},
             {"drain-p2p", "gpu_recovery_drain_p2p", "job", "NONE", "NCCL_P2P_DISABLE=1"},
             {"drain-and-reset", "gpu_recovery_drain_reset", "node", "COMPONENT_RESET",
              "drain the work on GPU 0, then reset it"},
         }) {
        INFO(row.recovery);
        TempDir dir;
        const auto result = run(dir, h100_with(dir, "gpu.toml", fmt::format("recovery_action = \"{}\"", row.recovery)));
        INFO(result.err);
        const auto report = e2e::report(result);
        const auto found = findings_of(report, row.signal);
        REQUIRE(found.size() == 1);
        CHECK(found[0]["action"]["actor"] == row.actor);
        CHECK(found[0]["action"]["fleet"] == row.fleet);
        CHECK(has(found[0]["action"]["what"], row.words));
        const auto lines = action_lines(result.err);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0].starts_with(row.actor + ": "));
        if (row.actor == "node") CHECK(has(lines[0], "fleet: " + row.fleet));
    }
}

TEST_CASE("a critical Xid asks for the strongest of NVSentinel's actions for its Xids") {
    TempDir dir;
    const auto result = run(dir, h100_with(dir, "xid.toml", "xids = [119, 79]"));
    const auto found = findings_of(e2e::report(result), "xid_critical");
    REQUIRE(found.size() == 1);
    CHECK(found[0]["action"]["fleet"] == "RESTART_BM");
}

TEST_CASE("a GPU another process holds asks the container for a GPU of its own") {
    TempDir dir;
    const auto result = run(dir, h100_with(dir, "busy.toml", "memory_used_mib = 30720\nother_processes = 1"));
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["verdict"] == "degraded");
    const auto found = findings_of(report, "memory_in_use");
    REQUIRE(found.size() == 1);
    CHECK(found[0]["action"]["actor"] == "container");
    CHECK(found[0]["action"]["fleet"] == "NONE");
    CHECK(has(found[0]["action"]["docker"], "--gpus device="));
    CHECK(has(found[0]["action"]["kubernetes"], "nvidia.com/gpu"));
    const auto lines = action_lines(result.err);
    REQUIRE(lines.size() == 1);
    CHECK(has(lines[0], "container: GPU 0 is shared with other processes"));
    CHECK(has(lines[0], "Docker: --gpus device="));
    CHECK(has(lines[0], "Kubernetes: resources.limits"));
}

TEST_CASE("the summary's last lines are the actions, grouped by who acts, each once") {
    TempDir dir;
    // Two GPUs awaiting a reset, one hot, one shared: node actions and a container's.
    const std::string fixture = dir.file("two.toml");
    e2e::write_file(fixture,
                    "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n"
                    "[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
                    "[gpus.health]\nthermal_slowdown = true\nmemory_used_mib = 30720\nother_processes = 1\n\n"
                    "[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
                    "[gpus.health]\nthermal_slowdown = true\n");
    const auto result = run(dir, fixture, {"--explain"});
    INFO(result.err);
    const auto lines = action_lines(result.err);
    // The fixture's two GPUs have no peer access (p2p_unavailable): a node's matter too.
    REQUIRE(lines.size() == 4);
    CHECK(lines[0].starts_with("container: GPU 0 is shared"));
    CHECK(lines[1].starts_with("node: check the node's cooling for GPU 0"));
    CHECK(lines[2].starts_with("node: check the node's cooling for GPU 1"));
    CHECK(lines[3].starts_with("node: where the GPUs should reach each other directly"));
    CHECK(has(lines[1], "fleet: CONTACT_SUPPORT"));
    // Nothing follows them but the closing rule.
    CHECK(has(result.err, lines[3] + "\n===="));
    // --explain puts each finding's action under it.
    CHECK(has(result.err, "    to do (node): check the node's cooling for GPU 0"));
}

TEST_CASE("labels and metrics carry the action kinds, bounded values only", "[publish]") {
    TempDir dir;
    const auto result = e2e::provision(
        {"--gpu-fixture", h100_with(dir, "reset.toml", "recovery_action = \"gpu-reset\"\nmemory_used_mib = 30720"),
         "--site-packages", e2e::site_packages("torch-only"), "--env-file", dir.file("env"), "--node-labels",
         dir.file("labels"), "--metrics", dir.file("provision.prom")});
    INFO(result.err);
    const auto labels = publish_test::read_valid_labels(dir.file("labels"));
    CHECK(labels.at("provision/action.node") == "true");
    CHECK(labels.at("provision/action.container") == "true");
    CHECK(labels.at("provision/action.image") == "false");
    CHECK(labels.at("provision/action.job") == "false");
    CHECK(labels.at("provision/action.fleet") == "COMPONENT_RESET");
    const std::string metrics = e2e::read_file(dir.file("provision.prom"));
    CHECK(has(metrics, "# TYPE provision_finding_action gauge\n"));
    CHECK(has(metrics, "signal=\"gpu_recovery_reset\",actor=\"node\",fleet_action=\"COMPONENT_RESET\"} 1\n"));
    CHECK(has(metrics, "signal=\"memory_in_use\",actor=\"container\",fleet_action=\"NONE\"} 1\n"));
    const std::string promtool = publish_test::installed("promtool");
    if (promtool.empty()) {
        WARN("promtool not installed: the metrics file was not linted");
        return;
    }
    const auto checked = publish_test::promtool_check(promtool, dir.file("provision.prom"));
    CHECK(checked.exit_code == 0);
    CHECK(checked.out + checked.err == "");
}

TEST_CASE("a healthy run's labels ask nobody to act", "[publish]") {
    TempDir dir;
    const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                        e2e::site_packages("torch-only"), "--env-file", dir.file("env"),
                                        "--node-labels", dir.file("labels")});
    REQUIRE(result.exit_code == 0);
    const auto labels = publish_test::read_valid_labels(dir.file("labels"));
    for (const char* actor : {"container", "image", "job", "node"}) CHECK(labels.at(fmt::format("provision/action.{}", actor)) == "false");
    CHECK(labels.at("provision/action.fleet") == "NONE");
}
