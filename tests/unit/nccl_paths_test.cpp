// Which paths the workload's NCCL takes, by NCCL's own rules
// (nccl/nccl_paths.h), and its build string read from a library's bytes.
#include <catch2/catch.hpp>

#include "nccl/nccl_paths.h"

using namespace provision;

namespace {

std::optional<NcclLibrary> nccl(const std::string& version, const std::string& cuda = "13.0") {
    return NcclLibrary{version, cuda, "/x/libnccl.so.2", NcclSource::wheel};
}

}  // namespace

TEST_CASE("nccl paths: cuMem peer memory by default from 2.19.1 with a driver for CUDA 12", "[nccl]") {
    CHECK(nccl_paths(nccl("2.28.9"), std::nullopt, std::nullopt, 13000).peer == PeerPath::cumem_fd);
    CHECK(nccl_paths(nccl("2.19.1", "12.2"), std::nullopt, std::nullopt, 12020).peer == PeerPath::cumem_fd);
    CHECK(nccl_paths(nccl("2.19.0", "12.2"), std::nullopt, std::nullopt, 12020).peer == PeerPath::legacy_ipc);
    CHECK(nccl_paths(nccl("2.18.5", "12.2"), std::nullopt, std::nullopt, 12020).peer == PeerPath::legacy_ipc);
    CHECK(nccl_paths(nccl("2.28.9", "11.8"), std::nullopt, std::nullopt, 11080).peer == PeerPath::legacy_ipc);
    CHECK(nccl_paths(std::nullopt, std::nullopt, std::nullopt, 13000).peer == PeerPath::legacy_ipc);
}

TEST_CASE("nccl paths: NCCL_CUMEM_ENABLE read as NCCL's strtoll reads it", "[nccl]") {
    const auto peer = [](const char* value, const std::string& version = "2.28.9") {
        return nccl_paths(nccl(version), std::string(value), std::nullopt, 13000).peer;
    };
    CHECK(peer("0") == PeerPath::legacy_ipc);
    CHECK(peer("1") == PeerPath::cumem_fd);
    CHECK(peer("0x1") == PeerPath::cumem_fd);       // base 0
    CHECK(peer("yes") == PeerPath::legacy_ipc);     // no number: 0
    CHECK(peer("") == PeerPath::cumem_fd);          // empty: the default
    CHECK(peer("-2") == PeerPath::cumem_fd);        // auto
    CHECK(peer("-1") == PeerPath::legacy_ipc);      // any other negative: off
    CHECK(peer("1", "2.18.5") == PeerPath::cumem_fd);  // 2.18 takes it when asked
    CHECK(peer("1", "2.17.1") == PeerPath::legacy_ipc);  // before 2.18 there was none
    CHECK(nccl_parameter(std::string("99999999999999999999")) == std::nullopt);  // out of range: the default
}

TEST_CASE("nccl paths: cuMem host memory from 2.24 with a driver for CUDA 12.6, only beside cuMem peers", "[nccl]") {
    const auto host = [](const std::string& version, int driver, std::optional<std::string> setting = std::nullopt,
                         std::optional<std::string> peer = std::nullopt, const std::string& cuda = "12.8") {
        return nccl_paths(nccl(version, cuda), peer, setting, driver);
    };
    CHECK(host("2.28.9", 13000).cumem_host);
    CHECK(host("2.28.9", 13000).falls_back_from_cumem_host);
    CHECK(host("2.24.3", 12060).cumem_host);
    CHECK_FALSE(host("2.24.3", 12060).falls_back_from_cumem_host);  // before 2.26.3
    CHECK_FALSE(host("2.24.3", 12040).cumem_host);                   // the default needs a 12.6 driver
    CHECK(host("2.24.3", 12040, "1").cumem_host);                    // asked: 12.2 is enough
    CHECK_FALSE(host("2.24.3", 12010, "1").cumem_host);              // never below 12.2
    CHECK_FALSE(host("2.23.4", 13000).cumem_host);                   // 2.23: only when asked
    CHECK(host("2.23.4", 13000, "1").cumem_host);
    CHECK_FALSE(host("2.28.9", 13000, "0").cumem_host);
    CHECK_FALSE(host("2.28.9", 13000, std::nullopt, std::string("0")).cumem_host);  // no cuMem peers: /dev/shm
    CHECK_FALSE(host("2.28.9", 13000, std::nullopt, std::nullopt, "12.1").cumem_host);  // NCCL built before 12.2
}

TEST_CASE("nccl build string: found past the decoy beside it, never from cut or hostile text", "[nccl]") {
    using namespace std::string_literals;
    const auto build = find_nccl_build_string("NCCL version 2.28.9 compiled with CUDA 13.0\0junk\0NCCL version 2.28.9+cuda13.0\0"s);
    REQUIRE(build);
    CHECK(build->version == "2.28.9");
    CHECK(build->cuda == "13.0");
    CHECK(find_nccl_build_string("NCCL version 2.30.1rc+cuda12.9\0"s)->version == "2.30.1rc");  // NCCL_SUFFIX
    CHECK_FALSE(find_nccl_build_string("NCCL version 2.28.9+cuda13.0"s));      // no end
    CHECK_FALSE(find_nccl_build_string("NCCL version \x1b[31m+cuda13.0\0"s));   // no version
    CHECK_FALSE(find_nccl_build_string("NCCL version 2.28.9+cuda\0"s));         // no CUDA
    CHECK(cuda_number("13.0") == 13000);
    CHECK(cuda_number("12.6") == 12060);
    CHECK(cuda_number("") == 0);
}
