#include "health/torch_fix.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "native/driver_compat.h"
#include "native/kernel_support.h"

namespace provision {
namespace {

bool carries_sass_for(const TorchBuildSpec& build, ComputeCapability gpu) {
    return std::any_of(build.sass.begin(), build.sass.end(), [&](const ComputeCapability& capability) {
        const native::Target target{native::CodeKind::sass, capability.major * 10 + capability.minor,
                                    native::ArchVariant::plain};
        return native::runs_on(target, gpu);
    });
}

}  // namespace

const TorchBuildSpec* serving_torch_build(const std::map<std::string, TorchBuildSpec>& builds,
                                          const Inventory& inventory) {
    const auto driver_cuda = native::CudaVersion::parse(inventory.driver.cuda);
    if (!driver_cuda || inventory.gpus.empty()) return nullptr;
    std::vector<const TorchBuildSpec*> order;
    for (const auto& [name, build] : builds) order.push_back(&build);
    // Newest CUDA first; the map already orders equal CUDA versions by name.
    std::stable_sort(order.begin(), order.end(), [](const TorchBuildSpec* a, const TorchBuildSpec* b) {
        return native::CudaVersion::parse(a->cuda).value_or(native::CudaVersion{}) >
               native::CudaVersion::parse(b->cuda).value_or(native::CudaVersion{});
    });
    for (const TorchBuildSpec* build : order) {
        const auto cuda = native::CudaVersion::parse(build->cuda);
        if (!cuda || native::check_driver(*cuda, *driver_cuda, false).verdict == native::DriverVerdict::driver_too_old)
            continue;
        const bool covers = std::all_of(inventory.gpus.begin(), inventory.gpus.end(),
                                        [&](const Gpu& gpu) { return carries_sass_for(*build, gpu.compute_capability); });
        if (covers) return build;
    }
    return nullptr;
}

std::string torch_fix_words(const std::map<std::string, TorchBuildSpec>& builds, const Inventory& inventory) {
    const TorchBuildSpec* build = serving_torch_build(builds, inventory);
    if (!build) return {};
    return fmt::format("torch{} from {} (CUDA {}) runs here", build->torch, build->index, build->cuda);
}

}  // namespace provision
