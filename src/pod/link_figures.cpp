#include "pod/link_figures.h"

#include <algorithm>

#include <fmt/format.h>

namespace provision {

namespace {

std::optional<ExpectedBandwidth> pcie_bandwidth(unsigned generation, unsigned width, const PodRecipe& recipe) {
    const PcieFigure* figure = recipe.pcie_figure(generation);
    if (!figure || width == 0) return std::nullopt;
    return ExpectedBandwidth{figure->x16_gb_per_s * width / 16.0, figure->estimate,
                             fmt::format("PCIe Gen{} x{}", generation, width)};
}

}  // namespace

std::optional<ExpectedBandwidth> expected_peer_bandwidth(const GpuPair& pair, const Gpu& first, const Gpu& second,
                                                         const PodRecipe& recipe) {
    if (pair.path == LinkPath::nvlink) {
        const unsigned generation = first.nvlink_generation ? first.nvlink_generation : second.nvlink_generation;
        const NvLinkFigure* figure = recipe.nvlink_figure(generation, first.architecture, first.family);
        if (!figure || pair.nvlinks == 0) return std::nullopt;
        return ExpectedBandwidth{figure->gb_per_s_per_link * pair.nvlinks, figure->estimate,
                                 fmt::format("NVLink {}, {} link{}", figure->generation, pair.nvlinks,
                                             pair.nvlinks == 1 ? "" : "s")};
    }
    if (pair.path == LinkPath::unknown || !first.pcie || !second.pcie) return std::nullopt;
    return pcie_bandwidth(std::min(first.pcie->max_generation, second.pcie->max_generation),
                          std::min(first.pcie->max_width, second.pcie->max_width), recipe);
}

std::optional<ExpectedBandwidth> expected_host_bandwidth(const Gpu& gpu, const PodRecipe& recipe) {
    if (!gpu.pcie) return std::nullopt;
    return pcie_bandwidth(gpu.pcie->max_generation, gpu.pcie->max_width, recipe);
}

}  // namespace provision
