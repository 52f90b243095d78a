// When NVML's answer stands in for libcuda's: the rule itself, and
// detect_gpus against the fake drivers, which log every cuInit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "gpu/detect.h"
#include "gpu/nvml_stand_in.h"
#include "test_support.h"

using namespace provision;

namespace {

using test_support::ScopedEnv;

NvmlGpu nvml_gpu(int index, const std::string& name, const std::string& uuid) {
    NvmlGpu entry;
    entry.gpu.nvml_index = index;
    entry.gpu.name = name;
    entry.gpu.uuid = uuid;
    entry.gpu.compute_capability = name.find("H100") != std::string::npos ? ComputeCapability{9, 0}
                                                                           : ComputeCapability{8, 0};
    entry.capability_known = true;
    return entry;
}

NvmlReport healthy(std::vector<NvmlGpu> gpus) {
    NvmlReport report;
    report.library_found = true;
    report.initialised = true;
    report.driver_version = "580.159.04";
    report.cuda_version = "13.0";
    report.gpus = std::move(gpus);
    return report;
}

const NvmlGpu h100_0 = nvml_gpu(0, "NVIDIA H100 80GB HBM3", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
const NvmlGpu h100_1 = nvml_gpu(1, "NVIDIA H100 80GB HBM3", "GPU-0a1b2c3d-1111-4a00-8000-000000000000");
const NvmlGpu a100_1 = nvml_gpu(1, "NVIDIA A100-SXM4-80GB", "GPU-1b7e3c52-0a9d-4e61-8f2b-7c4d5e6f7a80");

std::string needed(const NvmlReport& nvml, std::optional<std::string> visible = std::nullopt,
                   std::optional<std::string> order = std::nullopt) {
    return why_libcuda_is_needed(nvml, {std::move(visible), std::move(order)}).value_or("");
}

}  // namespace

TEST_CASE("NVML stands in for libcuda where CUDA's order cannot differ", "[gpu][stand-in]") {
    CHECK(needed(healthy({h100_0})) == "");
    CHECK(needed(healthy({})) == "");
    CHECK(needed(healthy({h100_0, h100_1})) == "");
    CHECK(needed(healthy({h100_0, h100_1}), "1,0") == "");  // same model: indices mean the same in both orders
    CHECK(needed(healthy({h100_0, a100_1}), "", std::nullopt) == "");  // no GPU visible
    CHECK(needed(healthy({h100_0, a100_1}), "GPU-1b7e, GPU-8932") == "");
    CHECK(needed(healthy({h100_0, a100_1}), "0,1", "PCI_BUS_ID") == "");
    CHECK(needed(healthy({h100_0, a100_1}), std::nullopt, "PCI_BUS_ID") == "");
}

TEST_CASE("libcuda enumerates where NVML cannot stand in", "[gpu][stand-in]") {
    CHECK(needed(healthy({h100_0, a100_1})) ==
          "CUDA orders GPUs of different models fastest first, an order NVML does not give");
    CHECK(needed(healthy({h100_0, a100_1}), "0") != "");
    CHECK(needed(healthy({h100_0, a100_1}), "GPU-1b7e,0") != "");
    CHECK(needed(healthy({h100_0, a100_1}), "1", "FASTEST_FIRST") != "");
    CHECK(needed(healthy({h100_0}), "MIG-8932f937-d72c-4106-c12f-20bd9faed9f6") ==
          "CUDA_VISIBLE_DEVICES names a MIG instance");
    CHECK(needed(healthy({h100_0}), "mig-GPU-8932f937/1/0") == "CUDA_VISIBLE_DEVICES names a MIG instance");

    NvmlReport report = healthy({h100_0, h100_1});
    report.gpus[1].mig_enabled = true;
    CHECK(needed(report) == "GPU 1 is in MIG mode");

    report = healthy({h100_0, h100_1});
    report.gpus[0].readable = false;
    report.problem = true;
    CHECK(needed(report) == "NVML reported a problem");
    report.problem = false;
    CHECK(needed(report) == "NVML could not read GPU 0");

    report = healthy({h100_0});
    report.gpus[0].capability_known = false;
    CHECK(needed(report) == "this driver's NVML cannot report compute capabilities");

    report = healthy({h100_0});
    report.cuda_version.clear();
    CHECK(needed(report) == "this driver's NVML cannot report the CUDA version");

    CHECK(needed(NvmlReport{}) == "NVML did not answer");
}

namespace {


// The fake drivers acting out a fixture, with cuInit calls counted in a file.
struct LoggedMachine {
    LoggedMachine(const std::string& fixture, const std::optional<std::string>& visible,
                  const std::optional<std::string>& order = std::nullopt)
        : fixture_env("PROVISION_FAKE_GPU_FIXTURE", test_support::source_path("tests/fixtures/gpus/" + fixture)),
          visible_env("CUDA_VISIBLE_DEVICES", visible),
          order_env("CUDA_DEVICE_ORDER", order),
          log_env("PROVISION_FAKE_CUDA_INIT_LOG", scratch.file("cuinit.log")) {
        options.nvml_library = FAKE_NVML_LIBRARY;
        options.cuda_library = FAKE_CUDA_LIBRARY;
        options.cuda_visible_devices = visible;
        options.cuda_device_order = order;
        options.time_limit = std::chrono::milliseconds(2000);
    }
    // cuInit calls so far.
    std::size_t cuda_inits() const {
        const std::string log = test_support::read_file(scratch.file("cuinit.log"));
        return static_cast<std::size_t>(std::count(log.begin(), log.end(), '\n'));
    }

    test_support::TempDir scratch;
    ScopedEnv fixture_env;
    ScopedEnv visible_env;
    ScopedEnv order_env;
    ScopedEnv log_env;
    DetectOptions options;
};

}  // namespace

TEST_CASE("detect_gpus leaves libcuda unstarted where NVML stands in", "[gpu][detect][stand-in]") {
    SECTION("one GPU") {
        const LoggedMachine fake("h100.toml", std::nullopt);
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].name == "NVIDIA H100 80GB HBM3");
        CHECK(inventory.gpus[0].compute_capability == ComputeCapability{9, 0});
        CHECK(inventory.gpus[0].memory_mib == 81559);
        CHECK(inventory.gpus[0].nvml_index == 0);
        CHECK(inventory.driver.cuda == "13.0");
        CHECK_FALSE(inventory.driver_problem);
        CHECK(inventory.notes.empty());
        CHECK(fake.cuda_inits() == 0);
    }
    SECTION("eight GPUs of one model, picked by index and UUID") {
        const LoggedMachine fake("8x-h100.toml", "6,GPU-0a1b");
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(inventory.gpus[0].index == 0);
        CHECK(inventory.gpus[0].nvml_index == 6);
        CHECK(inventory.gpus[1].index == 1);
        CHECK(inventory.gpus[1].nvml_index == 0);
        CHECK(inventory.hidden_gpus == 6);
        CHECK(fake.cuda_inits() == 0);
    }
    SECTION("two models named by UUID") {
        const LoggedMachine fake("mixed-h100-a100.toml", "GPU-1b7e");
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].name == "NVIDIA A100-SXM4-80GB");
        CHECK(inventory.gpus[0].nvml_index == 1);
        CHECK(inventory.hidden_gpus == 1);
        CHECK(fake.cuda_inits() == 0);
    }
    SECTION("two models in PCI bus order") {
        const LoggedMachine fake("mixed-h100-a100.toml", "1", "PCI_BUS_ID");
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].nvml_index == 1);
        CHECK(fake.cuda_inits() == 0);
    }
}

TEST_CASE("detect_gpus starts libcuda where NVML cannot stand in", "[gpu][detect][stand-in]") {
    SECTION("two models, CUDA's own order") {
        const LoggedMachine fake("mixed-h100-a100.toml", std::nullopt);
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(fake.cuda_inits() == 1);
    }
    SECTION("two models picked by index") {
        const LoggedMachine fake("mixed-h100-a100.toml", "0");
        REQUIRE(detect_gpus(fake.options).gpus.size() == 1);
        CHECK(fake.cuda_inits() == 1);
    }
    SECTION("an NVML too old to report compute capabilities") {
        LoggedMachine fake("h100.toml", std::nullopt);
        fake.options.nvml_library = FAKE_NVML_OLD_LIBRARY;
        const Inventory inventory = detect_gpus(fake.options);
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].compute_capability == ComputeCapability{9, 0});
        CHECK(fake.cuda_inits() == 1);
    }
}

TEST_CASE("detect_gpus still says when libcuda is missing though NVML stands in", "[gpu][detect][stand-in]") {
    LoggedMachine fake("h100.toml", std::nullopt);
    fake.options.cuda_library = "/nonexistent/libcuda.so.1";
    const Inventory inventory = detect_gpus(fake.options);
    REQUIRE(inventory.gpus.size() == 1);
    CHECK(inventory.driver_problem);
    bool noted = false;
    for (const auto& note : inventory.notes) noted = noted || note.find("'compute' driver capability") != std::string::npos;
    CHECK(noted);
}
