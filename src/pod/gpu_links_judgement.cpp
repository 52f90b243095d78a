#include "pod/gpu_links_judgement.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "pod/link_figures.h"

namespace provision {

std::vector<Finding> judge_nvlinks(const Inventory& inventory, const HealthPolicy& policy) {
    if (inventory.gpus.size() < 2) return {};  // a GPU alone copies to no peer
    std::map<std::string, unsigned> most_of_model;  // the most active links a GPU of each model has here
    for (const Gpu& gpu : inventory.gpus)
        if (gpu.nvlinks) most_of_model[gpu.name] = std::max(most_of_model[gpu.name], gpu.nvlinks->active);
    std::vector<Finding> findings;
    for (const Gpu& gpu : inventory.gpus) {
        const unsigned total = gpu.nvlinks ? gpu.nvlinks->total : 0;
        const unsigned active = gpu.nvlinks ? gpu.nvlinks->active : 0;
        const auto model = most_of_model.find(gpu.name);
        const unsigned peers = model == most_of_model.end() ? 0 : model->second;
        std::string words;
        if (active < total)
            words = fmt::format("GPU {} ({}) has {} of its {} NVLinks active", gpu.index, gpu.name, active, total);
        else if (active < peers)
            words = fmt::format("GPU {} ({}) has {} active NVLink{} where another {} in this pod has {}", gpu.index,
                                gpu.name, active, active == 1 ? "" : "s", gpu.name, peers);
        if (words.empty()) continue;
        words += ": copies to its peers run slower, without an error; `nvidia-smi nvlink --status` shows which link "
                 "is down, and the node needs a check (a GPU or fabric reset)";
        findings.push_back({gpu.index, gpu.nvml_index, "nvlink_inactive", policy.level("nvlink_inactive"), words});
    }
    return findings;
}

std::vector<Finding> judge_gpu_models(const Inventory& inventory, const HealthPolicy& policy) {
    std::vector<std::string> models;
    for (const Gpu& gpu : inventory.gpus)
        if (std::find(models.begin(), models.end(), gpu.name) == models.end()) models.push_back(gpu.name);
    if (models.size() < 2) return {};
    // The selection follows the least capable GPU's family (select/selection.h).
    const Gpu* weakest = &inventory.gpus.front();
    for (const Gpu& gpu : inventory.gpus)
        if (gpu.compute_capability < weakest->compute_capability) weakest = &gpu;
    std::vector<std::string> listed;
    for (const std::string& model : models) {
        std::vector<int> indices;
        for (const Gpu& gpu : inventory.gpus)
            if (gpu.name == model) indices.push_back(gpu.index);
        listed.push_back(fmt::format("{} (GPU{} {})", model, indices.size() == 1 ? "" : "s", fmt::join(indices, ", ")));
    }
    return {{weakest->index, weakest->nvml_index, "mixed_gpus", policy.level("mixed_gpus"),
             fmt::format("GPUs of {} models: {}; GPU {} ({}, compute capability {}{}) is the least capable and "
                         "limits the selection: every GPU runs what GPU {} can run",
                         models.size(), fmt::join(listed, "; "), weakest->index, weakest->name,
                         weakest->compute_capability.str(),
                         weakest->architecture.empty() ? "" : ", " + weakest->architecture, weakest->index)}};
}

std::vector<Finding> judge_host_links(const Inventory& inventory, const CopyChecks& checks, const RecipeSet& recipes) {
    std::vector<Finding> findings;
    for (const Gpu& gpu : inventory.gpus) {
        const HostCopyResult* copies = checks.host(gpu.index);
        // A fixture's figures stand for a busy reading; a real GPU's
        // detection-time reading is an idle one unless the check re-read it.
        std::optional<PcieLink> busy = copies ? copies->link_while_busy : std::nullopt;
        if (!busy && inventory.simulated()) busy = gpu.pcie;
        const std::optional<PcieLink> link = busy ? busy : gpu.pcie;
        std::vector<std::string> reasons;
        if (link && link->width < link->max_width)
            reasons.push_back(fmt::format("its PCIe link runs at x{} of x{}", link->width, link->max_width));
        if (busy && busy->generation < busy->max_generation)
            reasons.push_back(fmt::format("its PCIe link runs at Gen{} of Gen{} while busy", busy->generation,
                                          busy->max_generation));
        const auto expected = expected_host_bandwidth(gpu, recipes.pod);
        if (copies && expected) {
            const double floor = recipes.pod.host_copy_slow_below * expected->gb_per_s;
            for (const auto& [what, figure] : {std::pair{"host to device", copies->h2d_gb_per_s},
                                               std::pair{"device to host", copies->d2h_gb_per_s}})
                if (figure > 0 && figure < floor)
                    reasons.push_back(fmt::format("pinned {} copies ran at {:.1f} GB/s, under {:.0f}% of the {:.1f} "
                                                  "GB/s {} give{}",
                                                  what, figure, recipes.pod.host_copy_slow_below * 100,
                                                  expected->gb_per_s, expected->basis,
                                                  expected->estimate ? " (an estimate)" : ""));
        }
        if (reasons.empty()) continue;
        findings.push_back(
            {gpu.index, gpu.nvml_index, "pcie_degraded", recipes.policy.level("pcie_degraded"),
             fmt::format("GPU {} ({}): {}: loading models and offloading to host memory crawl; check the slot, the "
                         "riser and the BIOS's PCIe settings",
                         gpu.index, gpu.name, fmt::join(reasons, "; "))});
    }
    return findings;
}

unsigned pcie_replays_allowed_per_minute(unsigned generation, unsigned width) {
    // Gen 1 to 6: 2.5, 5, 8, 16, 32, 64 Gb/s a lane.
    static constexpr double kLaneRate[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    const unsigned gen = std::clamp(generation, 1u, 6u);
    return static_cast<unsigned>(std::ceil(kLaneRate[gen - 1] / 1000 * 60 * width));
}

namespace {

// What `counter` rose by from `before` to `after`; nullopt where either is
// missing or it went back (a reset, a wrap): that proves nothing.
std::optional<std::uint64_t> rise(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after) {
    if (!before || !after || *after < *before) return std::nullopt;
    return *after - *before;
}

}  // namespace

std::vector<Finding> judge_link_errors(const Inventory& inventory, const CopyChecks& checks, const HealthPolicy& policy) {
    std::vector<Finding> findings;
    for (const Gpu& gpu : inventory.gpus) {
        const auto index = static_cast<std::size_t>(gpu.index);
        if (index >= checks.link_errors_after.size() || !checks.link_errors_after[index]) continue;
        const LinkErrorCounts& before = gpu.health.link_errors;
        const LinkErrorCounts& after = *checks.link_errors_after[index];
        const std::string who = fmt::format("GPU {} ({})", gpu.index, gpu.name);
        const auto add = [&](const char* signal, std::string words) {
            findings.push_back({gpu.index, gpu.nvml_index, signal, policy.level(signal), std::move(words)});
        };
        std::vector<std::string> nvlink;
        const std::pair<const char*, std::optional<std::uint64_t>> moved[] = {
            {"replays", rise(before.nvlink_replay, after.nvlink_replay)},
            {"recoveries", rise(before.nvlink_recovery, after.nvlink_recovery)},
            {"link recoveries", rise(before.nvlink_recovery_events, after.nvlink_recovery_events)},
            {"failed link recoveries", rise(before.nvlink_recovery_failed, after.nvlink_recovery_failed)},
            {"symbol errors", rise(before.nvlink_symbol_errors, after.nvlink_symbol_errors)}};
        for (const auto& [what, count] : moved)
            if (count && *count > 0) nvlink.push_back(fmt::format("{} {}", *count, what));
        if (!nvlink.empty())
            add("nvlink_errors", fmt::format("{}'s NVLinks counted {} during the copies between GPUs: its links are "
                                             "failing (DCGM fails a GPU on any)",
                                             who, fmt::join(nvlink, ", ")));
        const double seconds = std::max(checks.copies_seconds, 1e-3);
        if (const auto crc = rise(before.nvlink_crc, after.nvlink_crc);
            crc && *crc > 0 && static_cast<double>(*crc) / seconds >= policy.nvlink_crc_per_second_max)
            add("nvlink_crc_errors",
                fmt::format("{}'s NVLinks counted {} CRC errors in {:.2f} s of copies, {:.0f} a second (from {:.0f} "
                            "a second they count): its links are noisy",
                            who, *crc, seconds, static_cast<double>(*crc) / seconds, policy.nvlink_crc_per_second_max));
        // The link as the copies ran it; else the most it can run at (an
        // idle link trains down, and a lower rate would allow fewer).
        const HostCopyResult* copies = checks.host(gpu.index);
        const PcieLink link = copies && copies->link_while_busy ? *copies->link_while_busy
                              : gpu.pcie ? PcieLink{gpu.pcie->max_generation, gpu.pcie->max_width, 0, 0}
                                         : PcieLink{};
        if (const auto replays = rise(before.pcie_replays, after.pcie_replays);
            replays && *replays > 0 && link.width > 0) {
            const unsigned allowed = pcie_replays_allowed_per_minute(link.generation, link.width);
            if (*replays > allowed)
                add("pcie_replays",
                    fmt::format("{}'s PCIe link (Gen{} x{}) replayed {} packets during the copies, where {} a minute "
                                "are allowed: the link, its riser or its slot is failing",
                                who, link.generation, link.width, *replays, allowed));
        }
    }
    return findings;
}

}  // namespace provision
