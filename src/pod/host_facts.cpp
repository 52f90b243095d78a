#include "pod/host_facts.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "core/regular_file.h"
#include "core/text.h"

namespace provision {
namespace {

constexpr std::size_t kMaxSysfsBytes = 64 * 1024;

std::string read_small(const std::string& path) {
    std::string error;
    const auto text = read_regular_file(path, kMaxSysfsBytes, error);
    return text ? trimmed(*text) : std::string();
}

// "MemTotal: 4812272 kB" in a node's meminfo: its memory in kB.
unsigned long long node_memory_kb(const std::string& meminfo) {
    const std::size_t at = meminfo.find("MemTotal:");
    return at == std::string::npos ? 0 : std::strtoull(meminfo.c_str() + at + 9, nullptr, 10);
}

}  // namespace

bool translates_dma(const std::string& iommu_type) { return iommu_type == "DMA" || iommu_type == "DMA-FQ"; }

HostFacts read_host_facts(const std::vector<std::string>& gpu_bus_ids, const HostPaths& paths) {
    HostFacts facts;
    namespace fs = std::filesystem;
    std::error_code ec;
    for (fs::directory_iterator it(paths.sysfs + "/devices/system/node", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("node", 0) != 0 || name.size() == 4 || name.find_first_not_of("0123456789", 4) != std::string::npos)
            continue;
        const std::string folder = it->path().string();
        if (read_small(folder + "/cpulist").empty() && node_memory_kb(read_small(folder + "/meminfo")) > 0)
            facts.numa_nodes_without_cpus.push_back(std::stoi(name.substr(4)));
    }
    std::sort(facts.numa_nodes_without_cpus.begin(), facts.numa_nodes_without_cpus.end());

    const std::string status = read_small(paths.proc_status);
    if (const std::size_t at = status.find("\nSeccomp:"); at != std::string::npos)
        facts.seccomp_mode = std::atoi(status.c_str() + at + 9);
    // get_mempolicy(NULL mode, no mask, 0, NULL, 0): harmless; EPERM is a filter's answer.
    facts.mempolicy_refused = ::syscall(SYS_get_mempolicy, nullptr, nullptr, 0ul, nullptr, 0ul) != 0 && errno == EPERM;

    for (const std::string& bus_id : gpu_bus_ids) {
        if (bus_id.empty() || bus_id.find('/') != std::string::npos) continue;
        const std::string device = paths.sysfs + "/bus/pci/devices/" + lowercase(bus_id);
        if (!fs::exists(device, ec)) continue;
        const std::string type = read_small(device + "/iommu_group/type");
        facts.iommu_types[bus_id] = fs::exists(device + "/iommu_group", ec) ? (type.empty() ? "unknown" : type) : "none";
    }
    return facts;
}

}  // namespace provision
