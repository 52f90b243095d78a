#include "gpu/nvml_stand_in.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace provision {

namespace {

std::vector<std::string> entries_of(std::string_view list) {
    std::vector<std::string> entries;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        std::string entry(list.substr(start, comma - start));
        std::erase_if(entry, [](unsigned char c) { return std::isspace(c); });
        if (!entry.empty()) entries.push_back(std::move(entry));
        start = comma + 1;
    }
    return entries;
}

bool is_index(const std::string& entry) {
    return std::all_of(entry.begin(), entry.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool names_mig_instance(const std::string& entry) {
    return entry.size() >= 4 && std::toupper(static_cast<unsigned char>(entry[0])) == 'M' &&
           std::toupper(static_cast<unsigned char>(entry[1])) == 'I' &&
           std::toupper(static_cast<unsigned char>(entry[2])) == 'G' && entry[3] == '-';
}

// True when CUDA's enumeration order and NVML's cannot differ in a way that
// changes which GPU the workload calls 0, 1, ...
bool order_cannot_differ(const NvmlReport& nvml, const CudaEnvironment& cuda,
                         const std::vector<std::string>& entries) {
    if (cuda.device_order == "PCI_BUS_ID") return true;
    if (nvml.gpus.size() <= 1) return true;
    const bool one_model = std::all_of(nvml.gpus.begin(), nvml.gpus.end(),
                                       [&](const NvmlGpu& gpu) { return gpu.gpu.name == nvml.gpus.front().gpu.name; });
    if (one_model) return true;
    // Indices are positions in CUDA's order; UUIDs are the same in both.
    return cuda.visible_devices && std::none_of(entries.begin(), entries.end(), is_index);
}

}  // namespace

std::optional<std::string> why_libcuda_is_needed(const NvmlReport& nvml, const CudaEnvironment& cuda) {
    if (!nvml.initialised) return "NVML did not answer";
    if (nvml.problem) return "NVML reported a problem";
    if (nvml.cuda_version.empty()) return "this driver's NVML cannot report the CUDA version";
    for (const NvmlGpu& entry : nvml.gpus) {
        if (!entry.readable) return fmt::format("NVML could not read GPU {}", entry.gpu.nvml_index);
        if (!entry.capability_known) return "this driver's NVML cannot report compute capabilities";
        if (entry.mig_enabled) return fmt::format("GPU {} is in MIG mode", entry.gpu.nvml_index);
    }
    const std::vector<std::string> entries = entries_of(cuda.visible_devices.value_or(""));
    if (std::any_of(entries.begin(), entries.end(), names_mig_instance))
        return "CUDA_VISIBLE_DEVICES names a MIG instance";
    if (!order_cannot_differ(nvml, cuda, entries))
        return "CUDA orders GPUs of different models fastest first, an order NVML does not give";
    return std::nullopt;
}

}  // namespace provision
