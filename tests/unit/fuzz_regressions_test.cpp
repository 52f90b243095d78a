// Every input in tests/fuzz/regressions/<target>/ (inputs that once broke
// something) and tests/fuzz/corpus/<target>/ (the seeds) through the fuzz
// targets' own entry points, so they run in every build, without clang.
// The env file inputs are also sourced by the real sh and bash here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "fuzz/env_file_target.h"
#include "fuzz/fatbin_target.h"
#include "fuzz/nccl_build_target.h"
#include "fuzz/network_sysfs_target.h"
#include "fuzz/gpu_fixture_target.h"
#include "fuzz/metadata_target.h"
#include "fuzz/package_files_target.h"
#include "fuzz/pcie_link_target.h"
#include "fuzz/fabric_readers_target.h"
#include "fuzz/recipe_target.h"
#include "fuzz/settings_target.h"
#include "fuzz/version_target.h"
#include "fuzz/rendezvous_lines_target.h"
#include "fuzz/xid_log_target.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_of(const std::string& target) {
    std::vector<fs::path> files;
    for (const char* kind : {"regressions", "corpus"}) {
        const fs::path folder = test_support::source_path("tests/fuzz/" + std::string(kind) + "/" + target);
        if (!fs::is_directory(folder)) continue;
        for (const auto& entry : fs::directory_iterator(folder))
            if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string contents(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs every input; returns how many there were.
std::size_t run_all(const std::string& target, const std::function<void(std::string_view)>& one_input) {
    const auto files = inputs_of(target);
    for (const auto& file : files) {
        INFO(file.string());
        const std::string input = contents(file);
        try {
            one_input(input);
        } catch (const fuzz::BrokenInvariant& broken) {
            FAIL_CHECK("broken invariant: " << broken.what());
        }
    }
    return files.size();
}

}  // namespace

TEST_CASE("fuzz inputs: NCCL's build string in a library", "[fuzz]") {
    CHECK(run_all("fuzz_nccl_build", fuzz::nccl_build::one_input) >= 6);
}

TEST_CASE("fuzz inputs: versions and requirements", "[fuzz]") {
    CHECK(run_all("fuzz_version", fuzz::version::one_input) >= 10);
}

TEST_CASE("fuzz inputs: METADATA headers", "[fuzz]") {
    CHECK(run_all("fuzz_metadata", fuzz::metadata::one_input) >= 5);
}

TEST_CASE("fuzz inputs: recipes", "[fuzz]") {
    CHECK(run_all("fuzz_recipe", fuzz::recipe::one_input) >= 10);
}

TEST_CASE("fuzz inputs: GPU fixtures", "[fuzz]") {
    CHECK(run_all("fuzz_gpu_fixture", fuzz::gpu_fixture::one_input) >= 10);
}

TEST_CASE("fuzz inputs: env files, sourced by sh and bash", "[fuzz]") {
    CHECK(run_all("fuzz_env_file", [](std::string_view input) {
              fuzz::env_file::one_input(input, fuzz::env_file::Shells::real);
          }) >= 5);
}

TEST_CASE("fuzz inputs: ELF files and fatbinaries", "[fuzz]") {
    CHECK(run_all("fuzz_fatbin", fuzz::fatbin::one_input) >= 7);
}

TEST_CASE("fuzz inputs: RECORD, cpp_lib.json and the extension checks' names", "[fuzz]") {
    CHECK(run_all("fuzz_package_files", fuzz::package_files::one_input) >= 5);
}

TEST_CASE("the fuzz targets' checks can fail", "[fuzz]") {
    // A reader that accepted anything would make the env file target prove nothing.
    CHECK_FALSE(fuzz::env_file::read_as_sh("export A=$(reboot)\n").has_value());
    CHECK_FALSE(fuzz::env_file::read_as_sh("export A='open\n").has_value());
    CHECK_FALSE(fuzz::env_file::read_as_sh("export A='x'").has_value());
    CHECK_FALSE(fuzz::env_file::read_as_sh("A='x'\n").has_value());
    CHECK(*fuzz::env_file::read_as_sh("# c\nexport A='it'\\''s'\n") ==
          fuzz::env_file::Entries{{"A", "it's"}});
    CHECK_THROWS_AS([] { FUZZ_CHECK(1 + 1 == 3); }(), fuzz::BrokenInvariant);
    // A fatbinary summary whose counts disagree is caught.
    provision::native::FatbinSummary inconsistent;
    inconsistent.containers = 1;
    inconsistent.entries = 2;
    inconsistent.target_sets = {{{}, 1}};
    CHECK_THROWS_AS(fuzz::fatbin::check_summary(inconsistent), fuzz::BrokenInvariant);
}

TEST_CASE("fuzz inputs: settings", "[fuzz]") {
    CHECK(run_all("fuzz_settings", fuzz::settings::one_input) >= 9);
}

TEST_CASE("fuzz inputs: PCIe link", "[fuzz]") {
    CHECK(run_all("fuzz_pcie_link", fuzz::pcie_link::one_input) >= 6);
}

TEST_CASE("fuzz inputs: the kernel log's Xids", "[fuzz]") {
    CHECK(run_all("fuzz_xid_log", fuzz::xid_log::one_input) >= 4);
}

TEST_CASE("fuzz inputs: a rendezvous peer's lines", "[fuzz][network]") {
    CHECK(run_all("fuzz_rendezvous_lines", fuzz::rendezvous_lines::one_input) >= 5);
}

TEST_CASE("fuzz inputs: the network stage's sysfs, /dev and interface readers", "[fuzz][network]") {
    CHECK(run_all("fuzz_network_sysfs", fuzz::network_sysfs::one_input) >= 6);
}

TEST_CASE("fuzz inputs: NVML's fabric info structs and /proc/devices", "[fuzz][fabric]") {
    CHECK(run_all("fuzz_fabric_readers", fuzz::fabric_readers::one_input) >= 8);
}
