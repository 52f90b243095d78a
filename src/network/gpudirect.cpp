#include "network/gpudirect.h"

#include <unistd.h>

#include <charconv>

#include "nccl/nccl_paths.h"
#include "network/sysfs_files.h"

namespace provision::network {

std::string_view to_string(PeerMemory memory) {
    switch (memory) {
        case PeerMemory::none: return "none";
        case PeerMemory::nv_mem: return "nv_mem";
        case PeerMemory::nv_mem_nc: return "nv_mem_nc";
        case PeerMemory::nvidia_peermem: return "nvidia_peermem";
    }
    return "none";
}

PeerMemory read_peer_memory(const std::string& sysfs) {
    // KNL_MODULE_LOADED: access(F_OK), in gdr.cc's order.
    const auto exists = [&](const char* path) { return ::access((sysfs + path).c_str(), F_OK) == 0; };
    if (exists("/kernel/mm/memory_peers/nv_mem/version")) return PeerMemory::nv_mem;
    if (exists("/kernel/mm/memory_peers/nv_mem_nc/version")) return PeerMemory::nv_mem_nc;
    if (exists("/module/nvidia_peermem/version")) return PeerMemory::nvidia_peermem;
    return PeerMemory::none;
}

std::optional<std::pair<int, int>> kernel_version_of(std::string_view release) {
    int major = 0, minor = 0;
    const char* end = release.data() + release.size();
    auto [after_major, ec] = std::from_chars(release.data(), end, major);
    if (ec != std::errc() || after_major == end || *after_major != '.') return std::nullopt;
    auto [after_minor, ec2] = std::from_chars(after_major + 1, end, minor);
    if (ec2 != std::errc()) return std::nullopt;
    return std::pair{major, minor};
}

DmaBufFacts read_dma_buf_facts(const std::string& proc, const std::optional<std::string>& dmabuf_enable) {
    DmaBufFacts facts;
    // NCCL_PARAM(DmaBufEnable, "DMABUF_ENABLE", 1).
    facts.enabled = nccl_parameter(dmabuf_enable).value_or(1) != 0;
    facts.kernel_release = read_attribute(proc + "/sys/kernel/osrelease", 128).value_or("");
    if (const auto version = kernel_version_of(facts.kernel_release))
        facts.kernel_new_enough = *version >= std::pair{5, 12};
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05 ..." (open) or
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05 ..." (proprietary).
    if (const auto version = read_attribute(proc + "/driver/nvidia/version", 1024); version && !version->empty())
        facts.open_kernel_module = version->find("Open Kernel Module") != std::string::npos;
    return facts;
}

}  // namespace provision::network
