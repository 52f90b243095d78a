// What NCCL's own INFO log says it took (src/worker/nccl_log.h), read from
// lines as NCCL 2.28 writes them on one node and across two hosts.
#include <string>

#include <catch2/catch.hpp>

#include "worker/nccl_log.h"

using namespace provision;

TEST_CASE("NCCL's log across two hosts over sockets: the network, its interface and each channel's transport",
          "[nccl][network]") {
    const std::string log =
        "node-a:1234:1234 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.5<0>\n"
        "node-a:1234:1234 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
        "node-a:1234:1240 [0] NCCL INFO NET/IB : No device found.\n"
        "node-a:1234:1240 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>\n"
        "node-a:1234:1240 [0] NCCL INFO Using network Socket\n"
        "node-a:1234:1240 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n"
        "node-a:1234:1240 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n"
        "node-a:1234:1240 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n"
        "a line of the workload's own, via nothing\n";
    const NcclLogFacts facts = read_nccl_log(log);
    CHECK(facts.network == "Socket");
    CHECK(facts.socket_interface == "eth0:10.0.0.5<0>");
    REQUIRE(facts.transports.size() == 1);
    CHECK(facts.transports[0] == std::pair<std::string, int>{"NET/Socket/0", 3});
    CHECK(transport_summary(facts) == "NET/Socket/0 (3 connections) over eth0:10.0.0.5<0>");
}

TEST_CASE("NCCL's log: IB with GPUDirect RDMA and NVLink on one node, told apart", "[nccl][network]") {
    const std::string log =
        "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>\n"
        "h:1:2 [0] NCCL INFO Using network IB\n"
        "h:1:2 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        "h:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA\n"
        "h:1:2 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
    const NcclLogFacts facts = read_nccl_log(log);
    CHECK(facts.network == "IB");
    // NET/Socket was set up, but no channel took it: its interface is not named.
    CHECK(transport_summary(facts) == "P2P/CUMEM/read (2 connections), NET/IB/0/GDRDMA (1 connection)");
}

TEST_CASE("NCCL's log: nothing NCCL wrote, or hostile text, gives nothing and stays bounded", "[nccl][network]") {
    CHECK(transport_summary(read_nccl_log("")) == "");
    CHECK(read_nccl_log("no NCCL here\n").network.empty());
    std::string many;
    for (int i = 0; i < 100; ++i)
        many += "x NCCL INFO Channel 00/0 : 0[0] -> 1[1] via KIND" + std::to_string(i) + "\x1b[31m\n";
    const NcclLogFacts facts = read_nccl_log(many);
    CHECK(facts.transports.size() == 16);  // a handful of kinds at most
    CHECK(transport_summary(facts).find('\x1b') == std::string::npos);
    CHECK(read_nccl_log(many, 3).transports.size() == 3);
}

TEST_CASE("NCCL's log across two GB200 trays: multi-node NVLink as NCCL says it took it", "[nccl][network][fabric]") {
    // As NCCL 2.28 writes them: ncclMnnvlCheck's INIT line, then channels across
    // the trays via P2P/MNNVL beside those within a tray.
    const std::string log =
        "t1:77:80 [0] NCCL INFO MNNVL busId 0x1801000 fabric UUID 814d0f3a.0000b5b7 cliqueId 0x7ffe state 3 "
        "healthMask 0xaa\n"
        "t1:77:80 [0] NCCL INFO MNNVL 1 cliqueId 7ffe cliqueSize 8 cliqueRank 2\n"
        "t1:77:80 [0] NCCL INFO Using network IB\n"
        "t1:77:80 [0] NCCL INFO Channel 00/0 : 4[0] -> 3[3] via P2P/MNNVL\n"
        "t1:77:80 [0] NCCL INFO Channel 00/1 : 2[2] -> 3[3] via P2P/CUMEM/read\n"
        "t1:77:80 [0] NCCL INFO Channel 01/0 : 4[0] -> 3[3] via P2P/MNNVL\n";
    const NcclLogFacts facts = read_nccl_log(log);
    REQUIRE(facts.mnnvl);
    CHECK(facts.mnnvl->id == 0x7ffe);
    CHECK(facts.mnnvl->size == 8);
    CHECK(facts.mnnvl->rank == 2);
    CHECK(took_mnnvl(facts));
    CHECK(transport_summary(facts) ==
          "MNNVL (clique 7ffe of 8 GPUs): P2P/MNNVL (2 connections), P2P/CUMEM/read (1 connection)");
}

TEST_CASE("NCCL's log: MNNVL only where NCCL said both its check and a channel over it", "[nccl][network][fabric]") {
    // The check passed, but every channel went over the network.
    NcclLogFacts facts = read_nccl_log("h [0] NCCL INFO MNNVL 1 cliqueId 3 cliqueSize 4 cliqueRank 0\n"
                                       "h [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n");
    CHECK(facts.mnnvl);
    CHECK_FALSE(took_mnnvl(facts));
    CHECK(transport_summary(facts) == "NET/IB/0/GDRDMA (1 connection)");
    // A channel word without NCCL's check line, and malformed check lines.
    facts = read_nccl_log("h [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via P2P/MNNVL\n"
                          "h [0] NCCL INFO MNNVL 1 cliqueId zz cliqueSize 4 cliqueRank 0\n"
                          "h [0] NCCL INFO MNNVL 1 cliqueId 3 cliqueSize 4 cliqueRank 9\n"
                          "h [0] NCCL INFO MNNVL 1 cliqueId 3 cliqueSize -1 cliqueRank 0\n");
    CHECK_FALSE(facts.mnnvl);
    CHECK_FALSE(took_mnnvl(facts));
    CHECK(transport_summary(facts) == "P2P/MNNVL (1 connection)");
}
