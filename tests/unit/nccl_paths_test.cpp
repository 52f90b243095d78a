// Which paths the workload's NCCL takes, by NCCL's own rules
// (nccl/nccl_paths.h), and its build string read from a library's bytes.
#include <catch2/catch.hpp>

#include "nccl/nccl_paths.h"
#include "nccl/nccl_version.h"

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

TEST_CASE("nccl build string: the scan is linear in its bytes, however the markers lie", "[nccl][readers]") {
    using namespace std::string_literals;
    // Markers without a NUL: each once looked for the NUL to the end of the window.
    std::string markers;
    while (markers.size() < (1u << 20)) markers += "NCCL version ";
    std::uint64_t examined = 0;
    CHECK_FALSE(find_nccl_build_string(markers, &examined));
    CHECK(examined <= 2 * markers.size());

    // The same, then a build string: still found, still linear.
    const std::string then_found = markers + "\0NCCL version 2.28.3+cuda13.0\0"s;
    examined = 0;
    const auto build = find_nccl_build_string(then_found, &examined);
    REQUIRE(build);
    CHECK(build->version == "2.28.3");
    CHECK(examined <= 2 * then_found.size());

    // Each marker followed by a NUL 200 bytes on: too far, looked at once.
    std::string far;
    while (far.size() < (1u << 20)) far += "NCCL version 2.28.9+cuda13.0" + std::string(200, 'x') + "\0"s;
    examined = 0;
    CHECK_FALSE(find_nccl_build_string(far, &examined));
    CHECK(examined <= 2 * far.size());
}

TEST_CASE("nccl versions: text that is no version is unknown, never what atoi makes of it", "[nccl]") {
    CHECK(parse_nccl_version("2.28.9"));
    CHECK(parse_nccl_version("2.28.9")->parts == std::array<int, 3>{2, 28, 9});
    CHECK(parse_nccl_version("2.30.1rc")->parts == std::array<int, 3>{2, 30, 1});  // NCCL_SUFFIX
    CHECK(parse_nccl_version("2.28.3+cuda13.0")->parts == std::array<int, 3>{2, 28, 3});
    CHECK(parse_nccl_version("2.21.5.post1")->parts == std::array<int, 3>{2, 21, 5});
    CHECK(parse_nccl_version("2.28")->written == 2);
    for (const char* text : {"abc", "", "2", "999999999999999999999999.0.0", "99999999999.1.1", "2.28.9.1", "2.28.3\x1b[31m",
                             "2..3", ".2.28", "2.28.9 ", "-2.28.9", "2.28.9+cuda13.0\n"}) {
        INFO(text);
        CHECK_FALSE(parse_nccl_version(text));
    }
    CHECK_FALSE(parse_nccl_version("2.28.3" + std::string(900 * 1024, 'a')));  // 900 KB of version
    CHECK(parse_release("13")->written == 1);
    CHECK(cuda_number("abc") == 0);
    CHECK(cuda_number("99999999999.0") == 0);
}

TEST_CASE("nccl paths: an unknown version takes no rule that needs a number", "[nccl]") {
    for (const char* version : {"abc", "999999999999999999999999.0.0", "99999999999.1.1", ""}) {
        INFO(version);
        const auto paths = nccl_paths(nccl(version), std::nullopt, std::nullopt, 13000);
        CHECK(paths.peer == PeerPath::legacy_ipc);
        CHECK_FALSE(paths.cumem_host);
        CHECK(paths.peer_why.find("predates") == std::string::npos);
        CHECK(paths.peer_why.find("NCCL (version unknown)") != std::string::npos);
    }
    // Asked for: cuMem, whatever the version.
    CHECK(nccl_paths(nccl("abc"), std::string("1"), std::nullopt, 13000).peer == PeerPath::cumem_fd);
}

TEST_CASE("nccl paths: a CUDA known only by its major (a wheel's name) is not taken as x.0", "[nccl]") {
    CHECK(nccl_paths(nccl("2.28.3", "13"), std::nullopt, std::nullopt, 13000).cumem_host);
    CHECK(nccl_paths(nccl("2.28.3", "12"), std::nullopt, std::nullopt, 12080).cumem_host);  // 12.x: not judged
    CHECK_FALSE(nccl_paths(nccl("2.28.3", "12.1"), std::nullopt, std::nullopt, 12080).cumem_host);
    CHECK_FALSE(nccl_paths(nccl("2.28.3", "11"), std::nullopt, std::nullopt, 12080).cumem_host);
}

TEST_CASE("nccl paths: every value a reason echoes is escaped and cut", "[nccl][messages]") {
    const std::string forged = "1\nprovision: error: forged\x1b[31m" + std::string(2000, 'x');
    const auto paths = nccl_paths(nccl("2.28.9"), forged, forged, 13000);
    for (const std::string& why : {paths.peer_why, paths.host_why}) {
        INFO(why);
        CHECK(why.find('\n') == std::string::npos);
        CHECK(why.find('\x1b') == std::string::npos);
        CHECK(why.size() < 400);
    }
}
