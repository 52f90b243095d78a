#include "nccl/nccl_paths.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "core/text.h"
#include "nccl/nccl_version.h"

namespace provision {
namespace {

// How a reason names the library: its version echoed (core/text.h).
std::string name_of(const NcclLibrary& nccl, const std::optional<ReleaseNumber>& version) {
    return version ? fmt::format("NCCL {}", echoed(nccl.version)) : std::string("NCCL (version unknown)");
}

// Whether NCCL's build is for CUDA 12.2 or newer; nullopt when its CUDA is
// unknown, or known only as "12" (a wheel's name: nvidia-nccl-cu12).
std::optional<bool> built_for_cuda_12_2(const std::string& cuda) {
    const auto release = parse_release(cuda);
    if (!release || (release->parts[0] == 12 && release->written < 2)) return std::nullopt;
    return at_least(*release, 12, 2);
}

}  // namespace

int cuda_number(const std::string& text) {
    const auto release = parse_release(text);
    if (!release) return 0;
    return release->parts[0] * 1000 + release->parts[1] * 10;
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
    // An unknown version is judged by no number: where a rule needs one,
    // the reason says it is unknown.
    const auto version = parse_nccl_version(nccl->version);
    const auto is_at_least = [&](int major, int minor, int patch) {
        return version && at_least(*version, major, minor, patch);
    };
    const std::string name = name_of(*nccl, version);
    const auto peer_setting = nccl_parameter(cumem_enable);
    const bool driver_supports = driver_cuda >= 12000;
    if (version && !is_at_least(2, 18, 0)) {
        paths.peer_why = fmt::format("{} predates cuMem (2.18): legacy CUDA IPC", name);
    } else if (peer_setting && *peer_setting >= 0) {
        paths.peer = *peer_setting != 0 ? PeerPath::cumem_fd : PeerPath::legacy_ipc;
        paths.peer_why =
            fmt::format("NCCL_CUMEM_ENABLE={} turns cuMem {}", echoed(*cumem_enable), *peer_setting ? "on" : "off");
    } else if (peer_setting && *peer_setting != -2) {
        paths.peer_why = fmt::format("NCCL_CUMEM_ENABLE={} turns cuMem off", echoed(*cumem_enable));
    } else if (!version) {
        paths.peer_why = fmt::format("{}: whether it takes cuMem by default (2.19 and newer) cannot be told; legacy "
                                     "CUDA IPC is checked, which every NCCL can take",
                                     name);
    } else if (!is_at_least(2, 19, 1)) {
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
    const bool host_default = is_at_least(2, 24, 0) && driver_cuda >= 12060;
    const bool host_asked = host_setting && *host_setting != -1 ? *host_setting != 0 : host_default;
    if (paths.peer != PeerPath::cumem_fd) {
        paths.host_why = "host buffers from /dev/shm (cuMem host memory needs cuMem)";
    } else if (!version) {
        paths.host_why = fmt::format("{}: cuMem host memory needs 2.23 or newer; /dev/shm is assumed", name);
    } else if (!is_at_least(2, 23, 0)) {
        paths.host_why = fmt::format("{} predates cuMem host memory (2.23)", name);
    } else if (driver_cuda < 12020 || built_for_cuda_12_2(nccl->cuda) == false) {
        paths.host_why = "cuMem host memory needs CUDA 12.2 in the driver and in NCCL's build";
    } else if (!host_asked) {
        paths.host_why = host_setting
                             ? fmt::format("NCCL_CUMEM_HOST_ENABLE={} turns it off", echoed(*cumem_host_enable))
                                      : fmt::format("{} takes host buffers from cuMem by default only from 2.24 with a "
                                                    "driver for CUDA 12.6 or newer",
                                                    name);
    } else {
        paths.cumem_host = true;
        paths.falls_back_from_cumem_host = is_at_least(2, 26, 3);
        paths.host_why = fmt::format("{} takes its host buffers from cuMem at the GPU's host NUMA node{}", name,
                                     host_setting
                                         ? fmt::format(" (NCCL_CUMEM_HOST_ENABLE={})", echoed(*cumem_host_enable))
                                         : std::string());
    }
    return paths;
}

}  // namespace provision
