#include "pod/gpu_links_judgement.h"

#include <algorithm>
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

}  // namespace provision
