#include "gpu/copy_check.h"

namespace provision {

std::string_view to_string(PeerCopyStatus status) {
    switch (status) {
        case PeerCopyStatus::passed: return "passed";
        case PeerCopyStatus::wrong_bytes: return "wrong-bytes";
        case PeerCopyStatus::timeout: return "timeout";
        case PeerCopyStatus::error: return "error";
        case PeerCopyStatus::not_measured: return "not-measured";
        case PeerCopyStatus::skipped: break;
    }
    return "skipped";
}

std::string_view to_string(FabricHandleStatus status) {
    switch (status) {
        case FabricHandleStatus::passed: return "passed";
        case FabricHandleStatus::failed: return "failed";
        case FabricHandleStatus::unsupported: return "unsupported";
        case FabricHandleStatus::not_measured: break;
    }
    return "not-measured";
}

std::optional<FabricHandleStatus> parse_fabric_handle_status(std::string_view text) {
    for (auto status : {FabricHandleStatus::passed, FabricHandleStatus::failed, FabricHandleStatus::unsupported,
                        FabricHandleStatus::not_measured})
        if (to_string(status) == text) return status;
    return std::nullopt;
}

std::string_view to_string(PeerPath path) { return path == PeerPath::cumem_fd ? "cumem-fd" : "legacy-ipc"; }

std::optional<PeerPath> parse_peer_path(std::string_view text) {
    if (text == "cumem-fd") return PeerPath::cumem_fd;
    if (text == "legacy-ipc") return PeerPath::legacy_ipc;
    return std::nullopt;
}

const PeerCopyResult* CopyChecks::pair(int first, int second) const {
    for (const PeerCopyResult& result : pairs)
        if ((result.first == first && result.second == second) || (result.first == second && result.second == first))
            return &result;
    return nullptr;
}

const HostCopyResult* CopyChecks::host(int gpu) const {
    for (const HostCopyResult& result : hosts)
        if (result.gpu == gpu) return &result;
    return nullptr;
}

}  // namespace provision
