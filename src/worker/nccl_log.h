// What NCCL says it took, read from its own INFO log: the network it loaded
// ("Using network Socket"), the interface NET/Socket uses, and the transport
// of each channel ("via NET/IB/0/GDRDMA", "via P2P/CUMEM/read").  NCCL has no
// call that answers this; its log is the source (NCCL_DEBUG=INFO with
// NCCL_DEBUG_SUBSYS=INIT,NET: src/transport.cc, src/transport/net_socket.cc).
// The worker turns the log on in its own process before NCCL is loaded, into
// a file of its own, and reads it once the all-reduce ran.
//
// Multi-node NVLink: where NCCL's own fabric check passed it logs (INIT)
// "MNNVL 1 cliqueId %x cliqueSize %d cliqueRank %d" (NVIDIA/nccl
// src/mnnvl.cc, ncclMnnvlCheck), and its P2P transport names the channels
// that cross nodes over the fabric "via P2P/MNNVL" (src/transport/p2p.cc).
// The all-reduce's transport says MNNVL only where NCCL said both.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace provision {

struct NcclLogFacts {
    std::string network;           // "Socket", "IB"; empty where the log did not say
    std::string socket_interface;  // "eth0:10.0.0.5<0>"; NET/Socket's first
    // Each channel's transport in order of first appearance, with how many
    // channel connections took it.
    std::vector<std::pair<std::string, int>> transports;
    // "MNNVL 1 cliqueId 7ffe cliqueSize 8 cliqueRank 2": NCCL took multi-node NVLink.
    struct MnnvlClique {
        unsigned id = 0;
        int size = 0;
        int rank = 0;
    };
    std::optional<MnnvlClique> mnnvl;
};

// Whether NCCL took multi-node NVLink: it said MNNVL 1 and a channel went
// via P2P/MNNVL.
bool took_mnnvl(const NcclLogFacts& facts);

// Reads NCCL's log lines (at most the first `max_lines`); anything else in
// the text is left alone.
NcclLogFacts read_nccl_log(std::string_view text, std::size_t max_lines = 100000);

// "NET/Socket/0 (2 connections) over eth0:10.0.0.5<0>"; "" where the log
// named no transport.  Where NCCL took multi-node NVLink it begins
// "MNNVL (clique 7ffe of 8 GPUs): ".
std::string transport_summary(const NcclLogFacts& facts);

// The log of this process: turned on (once) before NCCL is first loaded, in
// a file made for it; read and removed by `take`.  Never throws.
class NcclLogFile {
public:
    // Sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET and NCCL_DEBUG_FILE for
    // this process, once; later calls do nothing.
    static void turn_on();
    // What the log says so far ("" where it was never turned on).
    static std::string read();
};

}  // namespace provision
