#include "validate/expected_gpus.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace provision {
namespace {

bool all_digits(const std::string& text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Whether CUDA could read the entry as a GPU: an index or a UUID (prefix).
// Whether that GPU exists only the driver can say.
bool may_name_a_gpu(const std::string& entry) {
    return all_digits(entry) || entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0;
}

}  // namespace

std::vector<std::string> expected_gpu_entries(const std::optional<std::string>& cuda_visible_devices,
                                              int gpu_device_nodes) {
    std::vector<std::string> entries;
    if (!cuda_visible_devices) {
        for (int index = 0; index < gpu_device_nodes; ++index) entries.push_back(std::to_string(index));
        return entries;
    }
    const std::string& text = *cuda_visible_devices;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string entry = trimmed(text.substr(start, comma - start));
        if (!may_name_a_gpu(entry)) break;
        entries.push_back(entry);
        start = comma + 1;
    }
    if (std::any_of(entries.begin(), entries.end(), [](const std::string& e) { return e.rfind("MIG-", 0) == 0; }))
        entries.resize(1);
    if (static_cast<int>(entries.size()) > gpu_device_nodes) entries.resize(static_cast<std::size_t>(gpu_device_nodes));
    return entries;
}

int count_gpu_device_nodes(const std::string& dev) {
    DIR* folder = dev.empty() ? nullptr : opendir(dev.c_str());
    if (!folder) return 0;
    int count = 0;
    while (const dirent* entry = readdir(folder)) {
        const std::string name = entry->d_name;
        if (name.size() > 6 && name.rfind("nvidia", 0) == 0 && all_digits(name.substr(6))) ++count;
    }
    closedir(folder);
    return count;
}

}  // namespace provision
