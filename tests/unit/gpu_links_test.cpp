// How GPUs are joined: the words of `nvidia-smi topo -m`, the fixture's
// [[links]], nvlinks and pcie (and their errors at file:line:column), and
// the fake NVML answering the topology calls from the same fixtures, read
// through the real dlopen code.
#include <catch2/catch.hpp>

#include <chrono>

#include <fmt/format.h>

#include "core/error.h"
#include "gpu/detect.h"
#include "gpu/gpu_fixture.h"
#include "gpu/gpu_links.h"
#include "gpu/nvml_topology.h"
#include "test_support.h"

using namespace provision;

namespace {

std::string fixture(const std::string& name) { return std::string(PROVISION_SOURCE_DIR) + "/tests/fixtures/gpus/" + name; }

const std::string kDriver = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";

std::string gpu_entry(const std::string& extra = "") {
    return "[[gpus]]\nname = \"x\"\ncompute_capability = \"9.0\"\nmemory_mib = 1\n" + extra;
}

std::string error_of(const std::string& text) {
    try {
        read_gpu_fixture(toml::parse(text, std::string_view("inline.toml")), "inline.toml");
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::invalid_input);
        return error.what();
    }
    return "";
}

struct FakeDrivers {
    explicit FakeDrivers(const std::string& fixture_file, const std::optional<std::string>& visible = std::nullopt,
                         const char* nvml = FAKE_NVML_LIBRARY)
        : fixture_env("PROVISION_FAKE_GPU_FIXTURE", fixture_file), visible_env("CUDA_VISIBLE_DEVICES", visible) {
        options.nvml_library = nvml;
        options.cuda_library = FAKE_CUDA_LIBRARY;
        options.cuda_visible_devices = visible;
        options.time_limit = std::chrono::milliseconds(2000);
    }
    test_support::ScopedEnv fixture_env;
    test_support::ScopedEnv visible_env;
    DetectOptions options;
};

std::vector<std::string> words_of(const Inventory& inventory) {
    std::vector<std::string> words;
    for (const auto& pair : inventory.pairs)
        words.push_back(fmt::format("{}-{} {} {}", pair.first, pair.second, pair.path_word(), to_string(pair.p2p)));
    return words;
}

}  // namespace

TEST_CASE("topology words are nvidia-smi's", "[gpu][links]") {
    CHECK(path_word(LinkPath::nvlink, 18) == "NV18");
    CHECK(path_word(LinkPath::pix, 0) == "PIX");
    CHECK(path_word(LinkPath::unknown, 0) == "unknown");
    for (const char* word : {"NV1", "NV18", "NV36", "PIX", "PXB", "PHB", "NODE", "SYS"}) {
        INFO(word);
        const auto parsed = parse_path_word(word);
        REQUIRE(parsed);
        CHECK(path_word(parsed->path, parsed->nvlinks) == word);
    }
    for (const char* word : {"NV0", "NV", "nv4", "NV04", "NV123", "pix", "unknown", "X", ""}) {
        INFO(word);
        CHECK_FALSE(parse_path_word(word));
    }
    for (const auto& word : peer_access_words()) CHECK(to_string(*parse_peer_access(word)) == word);
    CHECK_FALSE(parse_peer_access("OK"));
    CHECK(nvlink_generation_of(6) == 4);
    CHECK(nvlink_generation_of(4) == 3);
    CHECK(nvlink_generation_of(7) == 5);
    CHECK(nvlink_generation_of(99) == 0);
}

TEST_CASE("a fixture's [[links]], nvlinks and pcie; unlisted pairs are SYS without peer access", "[gpu][links]") {
    const Inventory inventory = load_gpu_fixture(fixture("pod-4x-a100-nvlink-bridges.toml"), std::nullopt);
    REQUIRE(inventory.gpus.size() == 4);
    CHECK(inventory.gpus[0].nvlinks == NvLinkCount{12, 12});
    CHECK(inventory.gpus[0].pcie == PcieLink{4, 16, 4, 16});
    CHECK(words_of(inventory) == std::vector<std::string>{"0-1 NV12 ok", "0-2 SYS ok", "0-3 SYS ok", "1-2 SYS ok",
                                                          "1-3 SYS ok", "2-3 NV12 ok"});
    const Inventory unlisted = load_gpu_fixture(fixture("8x-h100.toml"), std::nullopt);
    REQUIRE(unlisted.pairs.size() == 28);
    CHECK(unlisted.pairs[27].path == LinkPath::sys);
    CHECK(unlisted.pairs[27].p2p == PeerAccess::not_supported);
    CHECK_FALSE(unlisted.gpus[0].nvlinks);
    CHECK_FALSE(unlisted.gpus[0].pcie);
    // One GPU: no pair.
    CHECK(load_gpu_fixture(fixture("h100.toml"), std::nullopt).pairs.empty());
}

TEST_CASE("CUDA_VISIBLE_DEVICES decides a fixture's pairs, in CUDA's order", "[gpu][links]") {
    const Inventory inventory = load_gpu_fixture(fixture("pod-4x-a100-nvlink-bridges.toml"), "3,2,0");
    CHECK(words_of(inventory) == std::vector<std::string>{"0-1 NV12 ok", "0-2 SYS ok", "1-2 SYS ok"});
    const Inventory one = load_gpu_fixture(fixture("pod-4x-a100-nvlink-bridges.toml"), "1");
    CHECK(one.pairs.empty());
}

TEST_CASE("fixture links and link figures are checked one by one", "[gpu][links][fixture]") {
    const std::string two = kDriver + gpu_entry() + gpu_entry();
    CHECK(error_of(two + "[[links]]\ngpus = [0, 2]\ntopology = \"PIX\"\np2p = \"ok\"\n")
              .find("inline.toml:13:12: each of 'gpus' in [[links]] entry 1 (a [[gpus]] position) must be an "
                    "integer from 0 to 1, not 2") == 0);
    CHECK(error_of(two + "[[links]]\ngpus = [1, 1]\ntopology = \"PIX\"\np2p = \"ok\"\n")
              .find("inline.toml:13:8: 'gpus' in [[links]] entry 1 names GPU 1 twice") == 0);
    CHECK(error_of(two + "[[links]]\ngpus = [0]\ntopology = \"PIX\"\np2p = \"ok\"\n")
              .find("must name two GPUs by position") != std::string::npos);
    const std::string bad_topology = error_of(two + "[[links]]\ngpus = [0, 1]\ntopology = \"NVLINK\"\np2p = \"ok\"\n");
    CHECK(bad_topology.find("inline.toml:14:12: 'topology' in [[links]] entry 1 must be one of NV<n>, PIX, PXB, PHB, "
                            "NODE, SYS, not \"NVLINK\"") == 0);
    const std::string bad_p2p = error_of(two + "[[links]]\ngpus = [0, 1]\ntopology = \"PIX\"\np2p = \"OK\"\n");
    CHECK(bad_p2p.find("inline.toml:15:7: 'p2p' in [[links]] entry 1 must be one of ok, chipset-not-supported, "
                       "gpu-not-supported, topology-not-supported, disabled-by-regkey, not-supported, unknown, not "
                       "\"OK\"") == 0);
    CHECK(error_of(two + "[[links]]\ngpus = [0, 1]\np2p = \"ok\"\n").find("[[links]] entry 1 needs 'topology'") !=
          std::string::npos);
    CHECK(error_of(two + "[[links]]\ngpus = [0, 1]\ntopology = \"NV4\"\np2p = \"ok\"\n")
              .find("'topology' in [[links]] entry 1 is NV4, but [[gpus]] entry 1 has 0 NVLink links ('nvlinks')") !=
          std::string::npos);
    const std::string twice = two + gpu_entry() + "[[links]]\ngpus = [0, 1]\ntopology = \"PIX\"\np2p = \"ok\"\n" +
                              "[[links]]\ngpus = [1, 0]\ntopology = \"SYS\"\np2p = \"ok\"\n";
    CHECK(error_of(twice).find(": [[links]] entry 2 names GPUs 1 and 0 again") != std::string::npos);
    // Two GPUs have one pair: a second entry is one too many, whatever it names.
    CHECK(error_of(two + "[[links]]\ngpus = [0, 1]\ntopology = \"PIX\"\np2p = \"ok\"\n" +
                   "[[links]]\ngpus = [1, 0]\ntopology = \"SYS\"\np2p = \"ok\"\n")
              .find("inline.toml:16:1: [[links]] entry 2 is one too many: a fixture of 2 GPUs has 1 pair") == 0);
    CHECK(error_of(two + "[[links]]\ngpus = [0, 1]\ntopology = \"PIX\"\np2p = \"ok\"\nlatency = 1\n")
              .find("unknown key 'latency'") != std::string::npos);

    CHECK(error_of(kDriver + gpu_entry("nvlinks = 40\n")).find("inline.toml:8:11: 'nvlinks' in [[gpus]] entry 1 must "
                                                               "be an integer from 0 to 36") == 0);
    CHECK(error_of(kDriver + gpu_entry("nvlinks = 12\nnvlinks_active = 13\n"))
              .find("inline.toml:9:18: 'nvlinks_active' in [[gpus]] entry 1 (of its 12 'nvlinks') must be an integer "
                    "from 0 to 12, not 13") == 0);
    CHECK(error_of(kDriver + gpu_entry("nvlinks_active = 1\n")).find("'nvlinks_active' in [[gpus]] entry 1 needs "
                                                                     "'nvlinks'") != std::string::npos);
    CHECK(error_of(kDriver + gpu_entry("pcie = { generation = 4, width = 3, max_generation = 4, max_width = 16 }\n"))
              .find("inline.toml:8:34: 'width' in 'pcie' of [[gpus]] entry 1 must be a PCIe width: 1, 2, 4, 8, 12, 16 "
                    "or 32") == 0);
    CHECK(error_of(kDriver + gpu_entry("pcie = { generation = 5, width = 16, max_generation = 4, max_width = 16 }\n"))
              .find("'generation' in 'pcie' of [[gpus]] entry 1 (5) is above 'max_generation' (4)") !=
          std::string::npos);
    CHECK(error_of(kDriver + gpu_entry("pcie = { generation = 4, width = 16 }\n"))
              .find("'pcie' of [[gpus]] entry 1 needs 'max_generation'") != std::string::npos);
    CHECK(error_of(kDriver + gpu_entry("pcie = 4\n")).find("'pcie' of [[gpus]] entry 1 must be a table") !=
          std::string::npos);
    CHECK(error_of(kDriver + gpu_entry("nvlinks = 18\nnvlinks_active = 16\npcie = { generation = 5, width = 16, "
                                       "max_generation = 5, max_width = 16 }\n"))
              .empty());
}

TEST_CASE("the fake NVML answers the topology calls as the fixture says, through the real dlopen code",
          "[gpu][links][detect]") {
    SECTION("NVLink bridges: NV12 counted from the links' remote PCI addresses") {
        FakeDrivers drivers(fixture("pod-4x-a100-nvlink-bridges.toml"));
        const Inventory inventory = detect_gpus(drivers.options);
        REQUIRE(inventory.gpus.size() == 4);
        CHECK(words_of(inventory) == std::vector<std::string>{"0-1 NV12 ok", "0-2 SYS ok", "0-3 SYS ok", "1-2 SYS ok",
                                                              "1-3 SYS ok", "2-3 NV12 ok"});
        CHECK(inventory.gpus[2].nvlinks == NvLinkCount{12, 12});
        CHECK(inventory.gpus[2].nvlink_generation == 3);  // NVML's code 4: NVLink 3.0
        CHECK(inventory.gpus[2].pcie == PcieLink{4, 16, 4, 16});
    }
    SECTION("NVSwitch: NV<n> from the fewer active switch links of the two") {
        FakeDrivers drivers(fixture("pod-8x-h100-nvswitch.toml"));
        const Inventory inventory = detect_gpus(drivers.options);
        REQUIRE(inventory.pairs.size() == 28);
        const Inventory simulated = load_gpu_fixture(fixture("pod-8x-h100-nvswitch.toml"), std::nullopt);
        CHECK(words_of(inventory) == words_of(simulated));
        CHECK(inventory.gpus[5].nvlinks == NvLinkCount{18, 16});
        CHECK(inventory.gpus[5].nvlink_generation == 4);
    }
    SECTION("PCIe relations and peer access words") {
        FakeDrivers drivers(fixture("pod-4x-l40s.toml"));
        const Inventory inventory = detect_gpus(drivers.options);
        CHECK(words_of(inventory) == words_of(load_gpu_fixture(fixture("pod-4x-l40s.toml"), std::nullopt)));
        CHECK(inventory.gpus[2].pcie == PcieLink{4, 8, 4, 16});
        CHECK_FALSE(inventory.gpus[2].nvlinks);
        FakeDrivers r550(fixture("pod-2x-rtx4090-r550.toml"));
        CHECK(words_of(detect_gpus(r550.options)) == std::vector<std::string>{"0-1 PHB chipset-not-supported"});
    }
    SECTION("a host of one GPU: its PCIe link, no NVLinks read") {
        test_support::TempDir dir;
        test_support::write_file(dir.file("one.toml"),
                                 "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n[[gpus]]\nname = \"NVIDIA H100 80GB "
                                 "HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\nnvlinks = 18\n"
                                 "pcie = { generation = 5, width = 16, max_generation = 5, max_width = 16 }\n");
        FakeDrivers drivers(dir.file("one.toml"));
        const Inventory inventory = detect_gpus(drivers.options);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.pairs.empty());
        CHECK_FALSE(inventory.gpus[0].nvlinks);
        CHECK(inventory.gpus[0].pcie == PcieLink{5, 16, 5, 16});
    }
    SECTION("CUDA_VISIBLE_DEVICES decides the pairs, by libcuda's list") {
        FakeDrivers drivers(fixture("pod-4x-a100-nvlink-bridges.toml"), "3,1");
        const Inventory inventory = detect_gpus(drivers.options);
        CHECK(words_of(inventory) == std::vector<std::string>{"0-1 SYS ok"});
    }
    SECTION("a driver without the topology calls leaves everything unknown, never a fault") {
        FakeDrivers drivers(fixture("pod-4x-a100-nvlink-bridges.toml"), std::nullopt, FAKE_NVML_OLD_LIBRARY);
        const Inventory inventory = detect_gpus(drivers.options);
        REQUIRE(inventory.gpus.size() == 4);
        CHECK(inventory.pairs.size() == 6);
        for (const auto& pair : inventory.pairs) {
            CHECK(pair.path == LinkPath::unknown);
            CHECK(pair.p2p == PeerAccess::unknown);
        }
        CHECK_FALSE(inventory.gpus[0].nvlinks);
        CHECK_FALSE(inventory.gpus[0].pcie);
        CHECK(inventory.driver_faults.empty());
    }
}
