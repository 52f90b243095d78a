// Finished runs the publishing stage's unit tests start from: an H100 node
// whose every check passed, changed per test.
#pragma once

#include <chrono>
#include <string>

#include "publish/published_run.h"
#include "recipe/recipe_loader.h"

namespace publish_test {

inline const provision::RecipeSet& builtin_recipes() {
    static const provision::RecipeSet recipes = provision::load_recipes_over_builtins(std::nullopt, {});
    return recipes;
}

inline provision::Gpu h100(int index) {
    provision::Gpu gpu;
    gpu.index = index;
    gpu.nvml_index = index;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f" + std::to_string(index);
    gpu.compute_capability = {9, 0};
    gpu.memory_mib = 81559;
    gpu.architecture = "hopper";
    gpu.family = "hopper";
    return gpu;
}

inline provision::Gpu a100(int index) {
    provision::Gpu gpu = h100(index);
    gpu.name = "NVIDIA A100-SXM4-80GB";
    gpu.compute_capability = {8, 0};
    gpu.architecture = "ampere";
    gpu.family = "ampere";
    return gpu;
}

// Every built-in check passed on every GPU of `report` (unsupported where
// the recipes' range leaves a GPU out), as the validate stage reports them.
inline void pass_every_check(provision::Report& report) {
    using provision::CheckStatus;
    report.validation.checks.clear();
    for (const auto& gpu : report.inventory.gpus)
        for (const auto& [name, spec] : builtin_recipes().checks) {
            const bool runs = spec.compute_capability.contains(gpu.compute_capability);
            report.validation.checks.push_back({gpu.index, name, runs ? CheckStatus::passed : CheckStatus::unsupported,
                                                runs ? 0.0031 : 0, 0.02, runs ? 1.9 : 0,
                                                name == "gemm.tf32" ? 289.5 : 0, ""});
        }
    report.validation.status = provision::ValidationStatus::passed;
    report.validation.wall_ms = 412;
    report.validation.proofs.clear();
    for (const auto& gpu : report.inventory.gpus) report.validation.proofs.push_back({gpu.index, 1764000000});
}

inline provision::Report h100_report() {
    provision::Report report;
    report.inventory.source = provision::InventorySource::driver;
    report.inventory.driver = {true, "580.159.04", "13.0"};
    report.inventory.gpus = {h100(0)};
    report.workload = "generic";
    report.decision.mechanism = "sdpa";
    report.verdict = provision::HealthLevel::ok;
    pass_every_check(report);
    // The formats as judge_format gives them on an H100 whose checks passed.
    using provision::FormatState;
    report.formats.formats = {{"fp16", "float16", FormatState::passed},
                              {"bf16", "bfloat16", FormatState::passed},
                              {"fp8", "", FormatState::passed},
                              {"fp6", "", FormatState::unsupported, 0, "needs compute capability 10.0 or newer"},
                              {"fp4", "", FormatState::unsupported, 0, "needs compute capability 10.0 or newer"}};
    const auto now = std::chrono::steady_clock::now();
    report.timings.mark_at(provision::Phase::recipes, now);
    report.timings.mark_at(provision::Phase::total, now + std::chrono::milliseconds(250));
    return report;
}

// Two H100s joined by 18 NVLinks whose peer copy passed, with host copies.
inline provision::Report two_h100_report() {
    provision::Report report = h100_report();
    report.inventory.gpus.push_back(h100(1));
    pass_every_check(report);
    provision::LinkReport link;
    link.pair = {0, 1, provision::LinkPath::nvlink, 18, provision::PeerAccess::ok};
    link.state = provision::LinkState::ok;
    link.check = provision::PeerCopyResult{0, 1, provision::PeerCopyStatus::passed, 371.2, 370.8, "", true};
    report.pod.links = {link};
    report.pod.host_copies = {{0, 52.1, 51.8, std::nullopt}, {1, 52.0, 0, std::nullopt}};
    return report;
}

// The network stage's reading on a node of two InfiniBand ports, of which
// NCCL takes mlx5_0's; GPU 0 gets GPUDirect RDMA to it, GPU 1's path is too far.
inline void with_network(provision::Report& report) {
    using namespace provision::network;
    NetworkReport network;
    network.scope = NetworkScope::node_facts;
    RdmaDevice device;
    device.name = "mlx5_0";
    device.access = DeviceAccess::usable;
    RdmaPort active;
    active.number = 1;
    active.state = PortState::active;
    active.link_layer = LinkLayer::infiniband;
    active.rate_gbps = 400;
    RdmaPort down = active;
    down.number = 2;
    down.state = PortState::down;
    down.rate_gbps.reset();
    device.ports = {active, down};
    network.rdma.devices = {device};
    network.taken = {{0, 0}};
    network.transport = Transport::ib;
    network.gpudirect.peer_memory = PeerMemory::nvidia_peermem;
    for (const auto& gpu : report.inventory.gpus) {
        GpuDirectGpu entry;
        entry.gpu = gpu.index;
        entry.nic = "mlx5_0";
        entry.path = gpu.index == 0 ? PathType::pix : PathType::sys;
        entry.state = gpu.index == 0 ? GpuDirectState::on : GpuDirectState::too_far;
        network.gpudirect.gpus.push_back(entry);
    }
    report.network = network;
}

// Multi-node NVLink: every GPU in one clique, fabric handles proven.
inline void with_fabric(provision::Report& report) {
    provision::FabricReport fabric;
    fabric.ran = true;
    provision::FabricCliqueGroup clique{"0123456789abcdef0123456789abcdef", 7, {}};
    for (const auto& gpu : report.inventory.gpus) clique.gpus.push_back(gpu.index);
    fabric.cliques = {clique};
    fabric.proven = true;
    report.fabric = fabric;
}

// 2026-11-24T12:00:00Z
inline const std::chrono::system_clock::time_point kWhen{std::chrono::seconds(1795521600)};

inline provision::PublishedRun finished(const provision::Report& report,
                                        provision::ExitCode code = provision::ExitCode::ok) {
    return {&report, &builtin_recipes(), code, kWhen, "c5c36ae71f20"};
}

inline provision::PublishedRun stopped(provision::ExitCode code) {
    return {nullptr, nullptr, code, kWhen, "c5c36ae71f20"};
}

}  // namespace publish_test
