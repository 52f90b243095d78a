#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>

#include "core/error.h"
#include "gpu/detect.h"
#include "gpu/gpu_fixture.h"

using namespace provision;

namespace {

std::string fixture(const std::string& name) { return std::string(PROVISION_SOURCE_DIR) + "/tests/fixtures/gpus/" + name; }

// The message of the Error that loading `name` throws; fails the test when
// it throws none or another kind.
std::string load_error(const std::string& name) {
    try {
        load_gpu_fixture(fixture(name), std::nullopt);
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::invalid_input);
        return error.what();
    }
    FAIL("loading " << name << " did not fail");
    return "";
}

}  // namespace

TEST_CASE("A GPU fixture reads driver and GPUs", "[gpu][fixture]") {
    const Inventory inventory = load_gpu_fixture(fixture("h100.toml"), std::nullopt);
    CHECK(inventory.simulated());
    CHECK(inventory.driver.present);
    CHECK(inventory.driver.version == "580.159.04");
    CHECK(inventory.driver.cuda == "13.0");
    REQUIRE(inventory.gpus.size() == 1);
    const Gpu& gpu = inventory.gpus[0];
    CHECK(gpu.index == 0);
    CHECK(gpu.name == "NVIDIA H100 80GB HBM3");
    CHECK(gpu.compute_capability == ComputeCapability{9, 0});
    CHECK(gpu.memory_mib == 81559);
    CHECK(gpu.uuid == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    CHECK(inventory.hidden_gpus == 0);
    CHECK_FALSE(inventory.driver_problem);
}

TEST_CASE("Every GPU family has a fixture that loads", "[gpu][fixture]") {
    const std::vector<std::pair<std::string, ComputeCapability>> families = {
        {"b200.toml", {10, 0}}, {"b300.toml", {10, 3}}, {"thor.toml", {11, 0}}, {"rtx5090.toml", {12, 0}},
        {"gb10.toml", {12, 1}}, {"h100.toml", {9, 0}},  {"l40s.toml", {8, 9}},  {"a100.toml", {8, 0}},
        {"a10g.toml", {8, 6}},  {"orin.toml", {8, 7}},  {"t4.toml", {7, 5}},    {"v100.toml", {7, 0}},
        {"p100.toml", {6, 0}},  {"p40.toml", {6, 1}},   {"m40.toml", {5, 2}},   {"k80.toml", {3, 7}},
    };
    for (const auto& [file, capability] : families) {
        INFO(file);
        const Inventory inventory = load_gpu_fixture(fixture(file), std::nullopt);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].compute_capability == capability);
        CHECK(is_gpu_uuid(inventory.gpus[0].uuid));
        CHECK(ComputeCapability::parse(inventory.driver.cuda).has_value());
    }
}

TEST_CASE("A fixture without GPUs is a machine without NVIDIA GPUs", "[gpu][fixture]") {
    const Inventory cpu = load_gpu_fixture(fixture("cpu-only.toml"), std::nullopt);
    CHECK(cpu.simulated());
    CHECK(cpu.gpus.empty());
    CHECK_FALSE(cpu.driver.present);
    CHECK(cpu.notes.size() == 1);

    const Inventory driver_only = load_gpu_fixture(fixture("driver-without-gpus.toml"), std::nullopt);
    CHECK(driver_only.gpus.empty());
    CHECK(driver_only.driver.present);
}

TEST_CASE("Fixture GPUs without a uuid get stable, distinct synthetic ones", "[gpu][fixture]") {
    const Inventory first = load_gpu_fixture(fixture("b300.toml"), std::nullopt);
    const Inventory again = load_gpu_fixture(fixture("b300.toml"), std::nullopt);
    REQUIRE(first.gpus.size() == 1);
    CHECK(first.gpus[0].uuid == again.gpus[0].uuid);
    CHECK(first.gpus[0].uuid == synthetic_gpu_uuid(0));
    std::set<std::string> uuids;
    for (std::size_t i = 0; i < 64; ++i) {
        CHECK(is_gpu_uuid(synthetic_gpu_uuid(i)));
        uuids.insert(synthetic_gpu_uuid(i));
    }
    CHECK(uuids.size() == 64);
}

TEST_CASE("CUDA_VISIBLE_DEVICES applies to fixtures in fixture order", "[gpu][fixture]") {
    const Inventory all = load_gpu_fixture(fixture("8x-h100.toml"), std::nullopt);
    CHECK(all.gpus.size() == 8);
    CHECK(all.hidden_gpus == 0);

    const Inventory two = load_gpu_fixture(fixture("8x-h100.toml"), "5,GPU-2c3d");
    REQUIRE(two.gpus.size() == 2);
    CHECK(two.gpus[0].index == 0);
    CHECK(two.gpus[0].nvml_index == 5);
    CHECK(two.gpus[1].index == 1);
    CHECK(two.gpus[1].nvml_index == 2);
    CHECK(two.hidden_gpus == 6);

    const Inventory ambiguous = load_gpu_fixture(fixture("8x-h100.toml"), "0,GPU-7e,1");
    CHECK(ambiguous.gpus.size() == 1);
    CHECK(ambiguous.hidden_gpus == 7);
    REQUIRE(ambiguous.notes.size() == 1);
    CHECK(ambiguous.notes[0].find("matches 2 GPUs") != std::string::npos);

    const Inventory none = load_gpu_fixture(fixture("mixed-h100-a100.toml"), "");
    CHECK(none.gpus.empty());
    CHECK(none.hidden_gpus == 2);

    const Inventory reordered = load_gpu_fixture(fixture("mixed-a100-t4.toml"), "1,0");
    REQUIRE(reordered.gpus.size() == 2);
    CHECK(reordered.gpus[0].name == "Tesla T4");
    CHECK(reordered.gpus[1].name == "NVIDIA A100-SXM4-80GB");
}

TEST_CASE("A GPU name keeps its shell metacharacters verbatim", "[gpu][fixture]") {
    const Inventory inventory = load_gpu_fixture(fixture("shell-metacharacters.toml"), std::nullopt);
    REQUIRE(inventory.gpus.size() == 1);
    const std::string& name = inventory.gpus[0].name;
    CHECK(name.find("'it''s'") != std::string::npos);
    CHECK(name.find("$(touch /tmp/pwned)") != std::string::npos);
    CHECK(name.find("`touch /tmp/pwned`") != std::string::npos);
    CHECK(name.find("`; rm") != std::string::npos);
    CHECK(name.find("$HOME \\\nexport PWNED=1") != std::string::npos);
}

TEST_CASE("Malformed fixtures name file, line and column", "[gpu][fixture]") {
    const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
        {"bad-syntax.toml", ":7:", ""},
        {"bad-type.toml", ":9:14: ", "'memory_mib' in [[gpus]] entry 1 must be a positive integer"},
        {"bad-compute-capability.toml", ":8:22: ", "must be a compute capability like \"8.6\", not \"sm_90\""},
        {"unknown-key.toml", ":8:1: ", "unknown key 'compute_capabilty' in [[gpus]] entry 1; did you mean "
                                       "'compute_capability'?"},
        {"missing-key.toml", ":6:1: ", "[[gpus]] entry 1 needs 'compute_capability'"},
        {"bad-uuid.toml", ":10:8: ", "'uuid' in [[gpus]] entry 1 must look like"},
        {"gpus-without-driver.toml", ":2:1: ", "needs a [driver] table"},
    };
    for (const auto& [file, position, words] : cases) {
        INFO(file);
        const std::string message = load_error(file);
        CHECK(message.rfind(fixture(file) + position, 0) == 0);
        CHECK(std::regex_search(message, std::regex(R"(\.toml:\d+:\d+: )")));
        CHECK(message.find(words) != std::string::npos);
    }
}

TEST_CASE("A missing fixture file is invalid input", "[gpu][fixture]") {
    const std::string message = load_error("no-such-machine.toml");
    CHECK(message.find("no-such-machine.toml: GPU fixture file not found") != std::string::npos);
}

TEST_CASE("Fixture values are checked one by one", "[gpu][fixture]") {
    auto error_of = [](const std::string& text) -> std::string {
        try {
            read_gpu_fixture(toml::parse(text, std::string_view("inline.toml")), "inline.toml");
        } catch (const Error& error) {
            return error.what();
        }
        return "";
    };
    const std::string driver = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";
    CHECK(error_of("[driver]\nversion = \"580\"\n").find("inline.toml:1:1: [driver] needs 'cuda'") == 0);
    CHECK(error_of("[driver]\nversion = \"580\"\ncuda = \"13\"\n").find("inline.toml:3:8: 'cuda' in [driver]") == 0);
    CHECK(error_of("[driver]\nversion = \"\"\ncuda = \"13.0\"\n").find("inline.toml:2:11: 'version'") == 0);
    CHECK(error_of("driver = 3\n").find("inline.toml:1:10: 'driver'") == 0);
    CHECK(error_of("gpus = 3\n" + driver).find("inline.toml:1:8: 'gpus' must be an array") == 0);
    CHECK(error_of("gpus = [1]\n" + driver).find("inline.toml:1:9: each entry of 'gpus'") == 0);
    CHECK(error_of(driver + "[[gpus]]\nname = \"x\"\ncompute_capability = \"9.0\"\nmemory_mib = 0\n")
              .find("inline.toml:7:14: 'memory_mib'") == 0);
    CHECK(error_of("gpu = []\n").find("did you mean 'gpus'?") != std::string::npos);
    const std::string twin = "[[gpus]]\nname = \"x\"\ncompute_capability = \"9.0\"\nmemory_mib = 1\n"
                             "uuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n";
    INFO(error_of(driver + twin + twin));
    CHECK(error_of(driver + twin + twin).find("inline.toml:13:8: [[gpus]] entries 1 and 2 have the same uuid") == 0);
    CHECK(error_of(driver + "[faults]\n").find("unknown key 'faults'") != std::string::npos);
    CHECK(read_gpu_fixture(toml::parse(driver + "[faults]\n"), "inline.toml", {"faults"}).driver.present);
}

TEST_CASE("A fixture GPU may carry health signals in [gpus.health]", "[gpu][fixture][health]") {
    const Inventory inventory = load_gpu_fixture(fixture("h100-unhealthy.toml"), std::nullopt);
    REQUIRE(inventory.gpus.size() == 1);
    const GpuHealth& health = inventory.gpus[0].health;
    CHECK(health.uncorrected_ecc_errors == std::optional<std::uint64_t>(4));
    CHECK(health.row_remap_pending == std::optional<bool>(true));
    CHECK(health.thermal_slowdown == std::optional<bool>(true));
    CHECK(health.memory_used_mib == std::optional<std::uint64_t>(30720));
    CHECK(health.other_processes == std::optional<unsigned>(1));
    CHECK(health.mig_mode == std::optional<bool>(false));
    // Left out: a signal the simulated driver cannot read.
    CHECK_FALSE(health.row_remap_failure);
    CHECK_FALSE(health.power_brake_slowdown);
    // Without the table, nothing is read.
    CHECK_FALSE(load_gpu_fixture(fixture("h100.toml"), std::nullopt).gpus[0].health.any());
}

TEST_CASE("[gpus.health] values are checked one by one", "[gpu][fixture][health]") {
    auto error_of = [](const std::string& health) -> std::string {
        const std::string text =
            "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n"
            "[[gpus]]\nname = \"x\"\ncompute_capability = \"9.0\"\nmemory_mib = 1\n[gpus.health]\n" + health;
        try {
            read_gpu_fixture(toml::parse(text, std::string_view("inline.toml")), "inline.toml");
        } catch (const Error& error) {
            return error.what();
        }
        return "";
    };
    CHECK(error_of("mig_mode = 1\n") ==
          "inline.toml:9:12: 'mig_mode' in the health table of [[gpus]] entry 1 must be true or false");
    CHECK(error_of("uncorrected_ecc_errors = -1\n") ==
          "inline.toml:9:26: 'uncorrected_ecc_errors' in the health table of [[gpus]] entry 1 must be an integer "
          "of 0 or more, not -1");
    // A count that does not fit NVML's type is refused, never wrapped.
    CHECK(error_of("other_processes = 4294967296\n") ==
          "inline.toml:9:19: 'other_processes' in the health table of [[gpus]] entry 1 must be an integer from 0 to "
          "4294967295, not 4294967296");
    CHECK(error_of("other_processes = 4294967295\n").empty());
    CHECK(error_of("thermal_slowdwn = true\n").find("inline.toml:9:1: unknown key 'thermal_slowdwn'") == 0);
    CHECK(error_of("thermal_slowdwn = true\n").find("did you mean 'thermal_slowdown'?") != std::string::npos);
    CHECK(error_of("other_processes = 0\n").empty());
}

namespace {

// A fixture of `gpus` H100s; with `every_link`, one [[links]] entry for each
// of their pairs, plus `extra_links` entries more (naming pair 0-1 again).
std::string fixture_of(std::size_t gpus, bool every_link, std::size_t extra_links = 0) {
    std::string text = "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n";
    for (std::size_t i = 0; i < gpus; ++i)
        text += "[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n";
    if (every_link)
        for (std::size_t a = 0; a < gpus; ++a)
            for (std::size_t b = a + 1; b < gpus; ++b)
                text += "[[links]]\ngpus = [" + std::to_string(a) + ", " + std::to_string(b) +
                        "]\ntopology = \"PIX\"\np2p = \"ok\"\n";
    for (std::size_t i = 0; i < extra_links; ++i) text += "[[links]]\ngpus = [0, 1]\ntopology = \"SYS\"\np2p = \"ok\"\n";
    return text;
}

GpuFixture read_text(const std::string& text) {
    return read_gpu_fixture(toml::parse(text, std::string_view("inline.toml")), "inline.toml");
}

std::string read_error(const std::string& text) {
    try {
        read_text(text);
    } catch (const Error& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("A fixture's pairs are read in work linear in its entries and pairs, counted as lookups",
          "[gpu][fixture][bounds]") {
    for (const std::size_t gpus : {2u, 8u, 32u, 64u}) {
        INFO(gpus << " GPUs");
        const std::size_t pairs = gpus * (gpus - 1) / 2;
        // Each [[links]] entry is added once, then each pair is looked up once.
        const GpuFixture listed = read_text(fixture_of(gpus, true));
        CHECK(listed.gpus.size() == gpus);
        CHECK(listed.topology.pairs().size() == pairs);
        CHECK(listed.topology.probes() == 2 * pairs);
        // Each pair [[links]] leaves out is looked up, then added as SYS.
        const GpuFixture unlisted = read_text(fixture_of(gpus, false));
        CHECK(unlisted.topology.pairs().size() == pairs);
        CHECK(unlisted.topology.probes() == 2 * pairs);
        // The visible pairs: one lookup each.
        std::vector<int> positions(gpus);
        for (std::size_t i = 0; i < gpus; ++i) positions[i] = static_cast<int>(i);
        CHECK(visible_pairs(positions, listed.topology).size() == pairs);
        CHECK(listed.topology.probes() == 3 * pairs);
    }
}

TEST_CASE("A fixture holds at most 64 GPUs and one [[links]] entry per pair; more is refused at its position",
          "[gpu][fixture][bounds]") {
    CHECK(kMostFixtureGpus == 64);
    // The 65th [[gpus]] entry starts at line 3 + 64 * 4 + 1.
    CHECK(read_error(fixture_of(65, false)) ==
          "inline.toml:260:1: [[gpus]] entry 65 is one too many: a GPU fixture holds at most 64 GPUs");
    CHECK(read_error(fixture_of(1000, false)).find("[[gpus]] entry 65 is one too many") != std::string::npos);
    // 2,016 pairs for 64 GPUs; the 2,017th entry is refused before it is read.
    const std::string over = read_error(fixture_of(64, true, 1));
    CHECK(over.find("[[links]] entry 2017 is one too many: a fixture of 64 GPUs has 2016 pairs, each listed at most "
                    "once") != std::string::npos);
    CHECK(read_error(fixture_of(1, false, 1)).find("[[links]] entry 1 is one too many: a fixture of 1 GPU has 0 "
                                                   "pairs") != std::string::npos);
    CHECK(read_error(fixture_of(2, true, 1)) ==
          "inline.toml:16:1: [[links]] entry 2 is one too many: a fixture of 2 GPUs has 1 pair, each listed at most once");
    // Within the bounds, a pair named twice is still named as such.
    CHECK(read_error(fixture_of(3, false, 2)).find("[[links]] entry 2 names GPUs 0 and 1 again") != std::string::npos);
}
