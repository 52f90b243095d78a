#include "nccl/nccl_paths.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include <array>

namespace provision {
namespace {

// "2.28.9" -> {2, 28, 9}; missing parts are 0.
std::array<int, 3> version_parts(const std::string& text) {
    std::array<int, 3> parts{0, 0, 0};
    std::size_t start = 0;
    for (int& part : parts) {
        if (start >= text.size()) break;
        part = std::atoi(text.c_str() + start);
        const std::size_t dot = text.find('.', start);
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return parts;
}

bool at_least(const std::array<int, 3>& version, int major, int minor, int patch) {
    return version >= std::array<int, 3>{major, minor, patch};
}

}  // namespace

int cuda_number(const std::string& text) {
    const auto parts = version_parts(text);
    return parts[0] * 1000 + parts[1] * 10;
}

std::optional<long long> nccl_parameter(const std::optional<std::string>& value) {
    if (!value || value->empty()) return std::nullopt;
    errno = 0;
    const long long number = std::strtoll(value->c_str(), nullptr, 0);
    if (errno != 0) return std::nullopt;
    return number;
}

NcclPaths nccl_paths(const std::optional<NcclLibrary>& nccl, const std::optional<std::string>& cumem_enable,
                     const std::optional<std::string>& cumem_host_enable, int driver_cuda) {
    NcclPaths paths;
    if (!nccl) {
        paths.peer_why = "no NCCL is installed for the workload: legacy CUDA IPC, as CUDA programs share memory";
        paths.host_why = "no NCCL";
        return paths;
    }
    const auto version = version_parts(nccl->version);
    const std::string name = nccl->version.empty() ? std::string("NCCL (version unknown)") : "NCCL " + nccl->version;
    const auto peer_setting = nccl_parameter(cumem_enable);
    const bool driver_supports = driver_cuda >= 12000;
    if (!at_least(version, 2, 18, 0) && !nccl->version.empty()) {
        paths.peer_why = fmt::format("{} predates cuMem (2.18): legacy CUDA IPC", name);
    } else if (peer_setting && *peer_setting >= 0) {
        paths.peer = *peer_setting != 0 ? PeerPath::cumem_fd : PeerPath::legacy_ipc;
        paths.peer_why = fmt::format("NCCL_CUMEM_ENABLE={} turns cuMem {}", *cumem_enable, *peer_setting ? "on" : "off");
    } else if (peer_setting && *peer_setting != -2) {
        paths.peer_why = fmt::format("NCCL_CUMEM_ENABLE={} turns cuMem off", *cumem_enable);
    } else if (!at_least(version, 2, 19, 1)) {
        paths.peer_why = fmt::format("{} takes cuMem only when NCCL_CUMEM_ENABLE asks (on by default from 2.19)", name);
    } else if (!driver_supports) {
        paths.peer_why = fmt::format("{} takes cuMem only with a driver for CUDA 12.0 or newer", name);
    } else {
        paths.peer = PeerPath::cumem_fd;
        paths.peer_why = fmt::format("{} shares peer memory through cuMem by default (2.19 and newer, driver CUDA "
                                     ">= 12.0): P2P/CUMEM",
                                     name);
    }

    const auto host_setting = nccl_parameter(cumem_host_enable);
    const bool host_default = at_least(version, 2, 24, 0) && driver_cuda >= 12060;
    const bool host_asked = host_setting && *host_setting != -1 ? *host_setting != 0 : host_default;
    if (paths.peer != PeerPath::cumem_fd) {
        paths.host_why = "host buffers from /dev/shm (cuMem host memory needs cuMem)";
    } else if (!at_least(version, 2, 23, 0)) {
        paths.host_why = fmt::format("{} predates cuMem host memory (2.23)", name);
    } else if (driver_cuda < 12020 || (!nccl->cuda.empty() && cuda_number(nccl->cuda) < 12020)) {
        paths.host_why = "cuMem host memory needs CUDA 12.2 in the driver and in NCCL's build";
    } else if (!host_asked) {
        paths.host_why = host_setting ? fmt::format("NCCL_CUMEM_HOST_ENABLE={} turns it off", *cumem_host_enable)
                                      : fmt::format("{} takes host buffers from cuMem by default only from 2.24 with a "
                                                    "driver for CUDA 12.6 or newer",
                                                    name);
    } else {
        paths.cumem_host = true;
        paths.falls_back_from_cumem_host = at_least(version, 2, 26, 3);
        paths.host_why = fmt::format("{} takes its host buffers from cuMem at the GPU's host NUMA node{}", name,
                                     host_setting ? fmt::format(" (NCCL_CUMEM_HOST_ENABLE={})", *cumem_host_enable)
                                                  : std::string());
    }
    return paths;
}

}  // namespace provision
