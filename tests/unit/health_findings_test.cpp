// The health stage: findings from GPU health signals and driver faults,
// weighed by the recipes' [policy], and how they change a run's verdict.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "health/findings.h"
#include "recipe/health_signals.h"
#include "recipe/recipe_loader.h"
#include "test_support.h"

using namespace provision;
using test_support::TempDir;
using test_support::write_file;

namespace {

const std::string kBuiltin = test_support::source_path("recipes");

Gpu h100(int index) {
    Gpu gpu;
    gpu.index = index;
    gpu.nvml_index = index;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.compute_capability = {9, 0};
    return gpu;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& signal) {
    for (const auto& finding : findings)
        if (finding.signal == signal) return &finding;
    return nullptr;
}

using test_support::malformed_recipe_message;

}  // namespace

TEST_CASE("the built-in policy weighs every signal and fault class", "[health][policy]") {
    const HealthPolicy policy = load_recipes({kBuiltin}).policy;
    for (const auto& key : health::gpu_signals()) CHECK(policy.levels.count(key) == 1);
    for (const auto& key : health::driver_fault_classes()) CHECK(policy.levels.count(key) == 1);
    for (const auto& key : health::package_signals()) CHECK(policy.levels.count(key) == 1);
    CHECK(policy.level("python_mismatch") == HealthLevel::degraded);
    CHECK(policy.level("uncorrected_ecc") == HealthLevel::failed);
    CHECK(policy.level("row_remap_failure") == HealthLevel::failed);
    CHECK(policy.level("gpu_lost") == HealthLevel::failed);
    CHECK(policy.level("thermal_slowdown") == HealthLevel::degraded);
    CHECK(policy.level("mig_mode") == HealthLevel::degraded);
    CHECK(policy.level("driver_not_loaded") == HealthLevel::degraded);
    CHECK(policy.level("nvml_missing") == HealthLevel::ok);
    CHECK(policy.memory_in_use_min_mib == 1024);
}

TEST_CASE("a user recipe overrides single policy keys", "[health][policy]") {
    TempDir dir;
    write_file(dir.file("mine.toml"), "[policy]\ngpu_lost = \"degraded\"\nmemory_in_use_min_mib = 0\n");
    const HealthPolicy policy = load_recipes({kBuiltin, dir.file("mine.toml")}).policy;
    CHECK(policy.level("gpu_lost") == HealthLevel::degraded);
    CHECK(policy.level("uncorrected_ecc") == HealthLevel::failed);
    CHECK(policy.memory_in_use_min_mib == 0);
}

TEST_CASE("a bad [policy] is an error naming file:line:column", "[health][policy]") {
    TempDir dir;
    SECTION("unknown key, with a suggestion") {
        write_file(dir.file("p.toml"), "[policy]\nuncorected_ecc = \"failed\"\n");
        const std::string message = malformed_recipe_message({kBuiltin, dir.file("p.toml")});
        CHECK(message.find(dir.file("p.toml") + ":2:1: unknown key 'uncorected_ecc' in [policy]") !=
              std::string::npos);
        CHECK(message.find("did you mean 'uncorrected_ecc'?") != std::string::npos);
    }
    SECTION("unknown level") {
        write_file(dir.file("p.toml"), "[policy]\n\ngpu_lost = \"fatal\"\n");
        CHECK(malformed_recipe_message({kBuiltin, dir.file("p.toml")}) ==
              dir.file("p.toml") + ":3:12: 'gpu_lost' in [policy] must be \"ok\", \"degraded\" or \"failed\", not "
                                   "\"fatal\"");
    }
    SECTION("wrong type") {
        write_file(dir.file("p.toml"), "[policy]\nmemory_in_use_min_mib = \"1 GiB\"\n");
        CHECK(malformed_recipe_message({kBuiltin, dir.file("p.toml")}).find(":2:25: 'memory_in_use_min_mib' in [policy] must be "
                                                              "an integer") != std::string::npos);
    }
}

TEST_CASE("a healthy machine has no findings", "[health]") {
    Inventory inventory;
    inventory.source = InventorySource::driver;
    Gpu gpu = h100(0);
    gpu.health.uncorrected_ecc_errors = 0;
    gpu.health.row_remap_failure = false;
    gpu.health.memory_used_mib = 600;  // under the limit, with no process: the driver's own
    gpu.health.other_processes = 0;
    gpu.health.mig_mode = false;
    inventory.gpus.push_back(gpu);
    const auto findings = evaluate_health(inventory, load_recipes({kBuiltin}).policy);
    CHECK(findings.empty());
    CHECK(worst_level(findings) == HealthLevel::ok);
}

TEST_CASE("each GPU signal becomes a finding at its policy's level", "[health]") {
    const HealthPolicy policy = load_recipes({kBuiltin}).policy;
    Inventory inventory;
    Gpu gpu = h100(1);
    gpu.nvml_index = 3;
    gpu.health.uncorrected_ecc_errors = 2;
    gpu.health.retired_pages_pending = true;
    gpu.health.row_remap_pending = true;
    gpu.health.row_remap_failure = true;
    gpu.health.thermal_slowdown = true;
    gpu.health.power_brake_slowdown = true;
    gpu.health.hw_slowdown = true;
    gpu.health.memory_used_mib = 100;
    gpu.health.other_processes = 1;
    gpu.health.mig_mode = true;
    gpu.fabric = GpuFabric{FabricState::in_progress, 0};
    gpu.health.recovery_action = RecoveryAction::gpu_reset;  // one action at a time: the other four stay quiet
    gpu.health.retired_pages = 63;
    gpu.health.uncorrectable_remapped_rows = 512;
    gpu.health.xids = std::vector<XidEvent>{{79, "0000:18:00", "GPU has fallen off the bus."}};
    inventory.gpus.push_back(gpu);
    inventory.driver.version = "580.95.05";
    const auto findings = evaluate_health(inventory, policy);
    std::vector<std::string> expected = health::gpu_signals();
    std::erase_if(expected, [](const std::string& signal) {
        return signal.starts_with("gpu_recovery_") && signal != "gpu_recovery_reset";
    });
    REQUIRE(findings.size() == expected.size());
    for (std::size_t i = 0; i < findings.size(); ++i) {
        CHECK(findings[i].signal == expected[i]);
        CHECK(findings[i].gpu == 1);
        CHECK(findings[i].nvml_index == 3);
        CHECK(findings[i].level == policy.level(findings[i].signal));
        CHECK(findings[i].words.rfind("GPU 1 (NVIDIA H100 80GB HBM3) ", 0) == 0);
    }
    CHECK(find(findings, "uncorrected_ecc")->words.find("2 uncorrected ECC memory errors") != std::string::npos);
    CHECK(find(findings, "memory_in_use")->words.find("100 MiB of memory in use by 1 other process") !=
          std::string::npos);
    CHECK(find(findings, "fabric_not_ready")->words.find("fabric is in-progress") != std::string::npos);
    CHECK(find(findings, "fabric_not_ready")->words.find("nvidia-fabricmanager service on the host, of the same "
                                                          "version as the driver (580.95.05)") != std::string::npos);
    CHECK(worst_level(findings) == HealthLevel::failed);
}

TEST_CASE("a fabric that is set up, or that the GPU does not have, is no finding", "[health]") {
    const HealthPolicy policy = load_recipes({kBuiltin}).policy;
    for (const GpuFabric& fabric : {GpuFabric{FabricState::completed, 0}, GpuFabric{FabricState::not_supported, 0}}) {
        Inventory inventory;
        Gpu gpu = h100(0);
        gpu.fabric = fabric;
        inventory.gpus.push_back(gpu);
        CHECK(evaluate_health(inventory, policy).empty());
    }
    Inventory failed;
    Gpu gpu = h100(0);
    gpu.fabric = GpuFabric{FabricState::completed, 999};  // set up, with an error
    failed.gpus.push_back(gpu);
    const auto findings = evaluate_health(failed, policy);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].signal == "fabric_not_ready");
    CHECK(findings[0].words.find("set up with an error (NVML status 999)") != std::string::npos);
}

TEST_CASE("memory in use counts from the policy's limit when no process is listed", "[health]") {
    HealthPolicy policy;
    policy.memory_in_use_min_mib = 2048;
    Inventory inventory;
    inventory.gpus.push_back(h100(0));
    inventory.gpus[0].health.memory_used_mib = 2047;
    CHECK(evaluate_health(inventory, policy).empty());
    inventory.gpus[0].health.memory_used_mib = 2048;
    const auto findings = evaluate_health(inventory, policy);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].signal == "memory_in_use");
    CHECK(findings[0].level == HealthLevel::degraded);  // no recipe set it
}

TEST_CASE("driver faults become findings, libcuda's as cuda_problem", "[health]") {
    const HealthPolicy policy = load_recipes({kBuiltin}).policy;
    SECTION("a lost GPU outside the workload's view") {
        Inventory inventory;
        inventory.gpus.push_back(h100(0));
        inventory.driver_problem = true;
        inventory.driver_faults.push_back({DriverFaultKind::gpu_lost, 1, "NVML's GPU 1 has fallen off the bus"});
        const auto findings = evaluate_health(inventory, policy);
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].signal == "gpu_lost");
        CHECK(findings[0].gpu == -1);
        CHECK(findings[0].nvml_index == 1);
        CHECK(findings[0].level == HealthLevel::failed);
        CHECK(findings[0].words == "NVML's GPU 1 has fallen off the bus");
    }
    SECTION("an unreadable GPU the workload sees") {
        Inventory inventory;
        inventory.gpus.push_back(h100(0));
        inventory.gpus[0].nvml_index = 2;
        inventory.driver_problem = true;
        inventory.driver_faults.push_back({DriverFaultKind::gpu_unreadable, 2, "NVML's GPU 2 could not be read"});
        const auto findings = evaluate_health(inventory, policy);
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].gpu == 0);
        CHECK(findings[0].level == HealthLevel::degraded);
    }
    SECTION("libcuda failing while NVML is healthy") {
        Inventory inventory;
        inventory.driver_problem = true;
        const auto findings = evaluate_health(inventory, policy);
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].signal == "cuda_problem");
        CHECK(findings[0].level == HealthLevel::degraded);
    }
    SECTION("no NVML at all is a CPU-only machine") {
        Inventory inventory;
        inventory.driver_faults.push_back({DriverFaultKind::nvml_missing, -1, "NVML is not available"});
        const auto findings = evaluate_health(inventory, policy);
        REQUIRE(findings.size() == 1);
        CHECK(findings[0].signal == "nvml_missing");
        CHECK(worst_level(findings) == HealthLevel::ok);
    }
}
