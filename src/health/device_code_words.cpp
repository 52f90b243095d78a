#include "health/device_code_words.h"

#include <fmt/format.h>

namespace provision {

std::vector<std::string> capability_list(const std::vector<native::Target>& targets) {
    std::vector<std::string> out;
    for (const auto& target : targets) out.push_back(target.capability_str());
    return out;
}

std::string carried_words(const std::vector<std::string>& sass, const std::vector<std::string>& ptx) {
    const std::string sass_words = sass.empty() ? "no SASS" : fmt::format("SASS for {}", fmt::join(sass, " "));
    const std::string ptx_words = ptx.empty() ? "no PTX" : fmt::format("PTX for {}", fmt::join(ptx, " "));
    return fmt::format("{} and {}", sass_words, ptx_words);
}

std::string gpu_with_capability(const Gpu& gpu) {
    return fmt::format("GPU {} ({}, compute capability {})", gpu.index, gpu.name, gpu.compute_capability.str());
}

std::string needed_driver_words(const native::DriverCompat& compat) {
    std::string needed = compat.cuda_needed ? fmt::format("a driver for CUDA {}", compat.cuda_needed->str())
                                            : std::string("a newer driver");
    if (compat.driver_needed) needed += fmt::format(" ({} or newer)", *compat.driver_needed);
    return needed;
}

std::string count_words(std::size_t count, const char* one, const char* many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::vector<std::string> unit_lines(const std::string& heading, const native::FatbinSummary& code) {
    std::vector<std::string> lines{heading};
    for (const auto& [target, units] : code.containers_with)
        lines.push_back(fmt::format("  {}: {}", target.str(), count_words(units, "unit", "units")));
    return lines;
}

}  // namespace provision
