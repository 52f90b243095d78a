#include "worker/nccl_log.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "core/text.h"

namespace provision {
namespace {

// The word after `marker` up to the next blank.
std::string word_after(std::string_view line, std::string_view marker) {
    const auto at = line.find(marker);
    if (at == std::string_view::npos) return {};
    std::string_view rest = line.substr(at + marker.size());
    return std::string(rest.substr(0, rest.find_first_of(" \t\r")));
}

// "MNNVL 1 cliqueId 7ffe cliqueSize 8 cliqueRank 2" (NVIDIA/nccl src/mnnvl.cc).
std::optional<NcclLogFacts::MnnvlClique> mnnvl_line(std::string_view line) {
    const auto at = line.find("NCCL INFO MNNVL 1 cliqueId ");
    if (at == std::string_view::npos) return std::nullopt;
    const std::string rest(line.substr(at + std::string_view("NCCL INFO ").size()));
    unsigned id = 0;
    int size = 0, rank = 0;
    if (std::sscanf(rest.c_str(), "MNNVL 1 cliqueId %x cliqueSize %d cliqueRank %d", &id, &size, &rank) != 3)
        return std::nullopt;
    if (size < 1 || size > (1 << 20) || rank < 0 || rank >= size) return std::nullopt;
    return NcclLogFacts::MnnvlClique{id, size, rank};
}

std::mutex log_mutex;
std::string log_path;  // set once turned on

}  // namespace

NcclLogFacts read_nccl_log(std::string_view text, std::size_t max_lines) {
    NcclLogFacts facts;
    std::size_t lines = 0;
    while (!text.empty() && lines++ < max_lines) {
        const auto end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (line.find("NCCL INFO") == std::string_view::npos) continue;
        if (facts.network.empty()) facts.network = word_after(line, "Using network ");
        if (facts.socket_interface.empty()) facts.socket_interface = word_after(line, "NET/Socket : Using [0]");
        if (!facts.mnnvl) facts.mnnvl = mnnvl_line(line);
        if (line.find("Channel ") == std::string_view::npos) continue;
        const std::string transport = word_after(line, " via ");
        if (transport.empty()) continue;
        const auto known = std::find_if(facts.transports.begin(), facts.transports.end(),
                                        [&](const auto& seen) { return seen.first == transport; });
        if (known != facts.transports.end()) {
            ++known->second;
        } else if (facts.transports.size() < 16) {  // a handful of kinds at most
            facts.transports.emplace_back(transport, 1);
        }
    }
    return facts;
}

bool took_mnnvl(const NcclLogFacts& facts) {
    return facts.mnnvl && std::any_of(facts.transports.begin(), facts.transports.end(),
                                      [](const auto& seen) { return seen.first.starts_with("P2P/MNNVL"); });
}

std::string transport_summary(const NcclLogFacts& facts) {
    std::string out;
    if (took_mnnvl(facts))
        out = fmt::format("MNNVL (clique {:x} of {} GPUs): ", facts.mnnvl->id, facts.mnnvl->size);
    const std::size_t head = out.size();
    for (const auto& [transport, count] : facts.transports)
        out += fmt::format("{}{} ({} connection{})", out.size() == head ? "" : ", ", echoed(transport), count,
                           count == 1 ? "" : "s");
    // The socket interface matters only where a channel goes over it.
    const bool over_sockets = std::any_of(facts.transports.begin(), facts.transports.end(),
                                          [](const auto& seen) { return seen.first.starts_with("NET/Socket"); });
    if (over_sockets && !facts.socket_interface.empty()) out += fmt::format(" over {}", echoed(facts.socket_interface));
    return out;
}

void NcclLogFile::turn_on() {
    const std::lock_guard lock(log_mutex);
    if (!log_path.empty()) return;
    // A file of our own (mkstemp), so NCCL's fopen never follows another's link.
    std::error_code error;
    const auto folder = std::filesystem::temp_directory_path(error);
    std::string path = (error ? std::string("/tmp") : folder.string()) + "/provision-nccl-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return;
    ::close(fd);
    log_path = path;
    std::atexit([] { ::unlink(log_path.c_str()); });
    ::setenv("NCCL_DEBUG", "INFO", 1);
    ::setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    ::setenv("NCCL_DEBUG_FILE", log_path.c_str(), 1);
}

std::string NcclLogFile::read() {
    const std::lock_guard lock(log_mutex);
    if (log_path.empty()) return {};
    std::ifstream in(log_path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace provision
