// detect_gpus through the real dlopen code, against the fake NVML and
// libcuda of tests/fake_nvml acting out machines with and without faults.
#include <catch2/catch.hpp>

#include "test_support.h"

#include <chrono>
#include <cstdlib>

#include "core/error.h"
#include "gpu/detect.h"

using namespace provision;

namespace {

using test_support::ScopedEnv;

std::string fixture(const std::string& name) { return std::string(PROVISION_SOURCE_DIR) + "/tests/fixtures/gpus/" + name; }
std::string machine(const std::string& name) {
    return std::string(PROVISION_SOURCE_DIR) + "/tests/fake_nvml/machines/" + name;
}


// The fake drivers acting out `machine_file`, with the workload's
// CUDA_VISIBLE_DEVICES (libcuda reads it from the environment).
struct FakeMachine {
    FakeMachine(const std::string& machine_file, const std::optional<std::string>& visible = std::nullopt)
        : fixture_env("PROVISION_FAKE_GPU_FIXTURE", machine_file), visible_env("CUDA_VISIBLE_DEVICES", visible) {
        options.nvml_library = FAKE_NVML_LIBRARY;
        options.cuda_library = FAKE_CUDA_LIBRARY;
        options.cuda_visible_devices = visible;
        options.time_limit = std::chrono::milliseconds(1000);
    }
    Inventory detect() const { return detect_gpus(options); }

    ScopedEnv fixture_env;
    ScopedEnv visible_env;
    DetectOptions options;
};

bool has_note(const Inventory& inventory, const std::string& words) {
    for (const auto& note : inventory.notes)
        if (note.find(words) != std::string::npos) return true;
    return false;
}

// A driver fault is recorded once, as a fault (its words become a finding).
bool has_fault(const Inventory& inventory, const std::string& words) {
    for (const auto& fault : inventory.driver_faults)
        if (fault.words.find(words) != std::string::npos) return true;
    return false;
}

std::string all_notes(const Inventory& inventory) {
    std::string text;
    for (const auto& note : inventory.notes) text += note + "\n";
    return text;
}

const char* h100_uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
const char* a100_uuid = "GPU-1b7e3c52-0a9d-4e61-8f2b-7c4d5e6f7a80";

}  // namespace

TEST_CASE("detect_gpus reads a healthy machine through NVML and libcuda", "[gpu][detect]") {
    const FakeMachine fake(fixture("mixed-h100-a100.toml"));
    const Inventory inventory = fake.detect();
    INFO(all_notes(inventory));
    CHECK(inventory.source == InventorySource::driver);
    CHECK_FALSE(inventory.simulated());
    CHECK(inventory.driver.present);
    CHECK(inventory.driver.version == "580.159.04");
    CHECK(inventory.driver.cuda == "13.0");
    CHECK_FALSE(inventory.driver_problem);
    CHECK(inventory.notes.empty());
    CHECK(inventory.hidden_gpus == 0);
    REQUIRE(inventory.gpus.size() == 2);
    CHECK(inventory.gpus[0].index == 0);
    CHECK(inventory.gpus[0].nvml_index == 0);
    CHECK(inventory.gpus[0].name == "NVIDIA H100 80GB HBM3");
    CHECK(inventory.gpus[0].uuid == h100_uuid);
    CHECK(inventory.gpus[0].compute_capability == ComputeCapability{9, 0});
    CHECK(inventory.gpus[0].memory_mib == 81559);
    CHECK(inventory.gpus[1].index == 1);
    CHECK(inventory.gpus[1].nvml_index == 1);
    CHECK(inventory.gpus[1].uuid == a100_uuid);
    CHECK(inventory.gpus[1].compute_capability == ComputeCapability{8, 0});
}

TEST_CASE("detect_gpus keeps synthetic fixture UUIDs consistent between NVML and libcuda", "[gpu][detect]") {
    const FakeMachine fake(fixture("b300.toml"));
    const Inventory inventory = fake.detect();
    REQUIRE(inventory.gpus.size() == 1);
    CHECK(inventory.gpus[0].nvml_index == 0);
    CHECK(inventory.gpus[0].name == "NVIDIA B300 SXM6 AC");
    CHECK(inventory.gpus[0].compute_capability == ComputeCapability{10, 3});
}

TEST_CASE("detect_gpus passes a GPU name with shell metacharacters through verbatim", "[gpu][detect]") {
    const std::string expected = load_gpu_fixture(fixture("shell-metacharacters.toml"), std::nullopt).gpus.at(0).name;
    for (const bool with_libcuda : {true, false}) {
        FakeMachine fake(fixture("shell-metacharacters.toml"));
        if (!with_libcuda) fake.options.cuda_library = "/nonexistent/libcuda.so.1";
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].name == expected);
    }
}

TEST_CASE("detect_gpus follows libcuda's CUDA_VISIBLE_DEVICES and matches NVML by UUID", "[gpu][detect]") {
    SECTION("by index") {
        const FakeMachine fake(fixture("8x-h100.toml"), "6,GPU-0a1b");
        const Inventory inventory = fake.detect();
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(inventory.gpus[0].index == 0);
        CHECK(inventory.gpus[0].nvml_index == 6);
        CHECK(inventory.gpus[1].index == 1);
        CHECK(inventory.gpus[1].nvml_index == 0);
        CHECK(inventory.hidden_gpus == 6);
        CHECK_FALSE(inventory.driver_problem);
        CHECK(inventory.notes.empty());
    }
    SECTION("ignored entries are explained") {
        const FakeMachine fake(fixture("8x-h100.toml"), "6,42,0");
        const Inventory inventory = fake.detect();
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].nvml_index == 6);
        CHECK(has_note(inventory, "CUDA_VISIBLE_DEVICES entry 2 ('42') is out of range (this machine has 8 GPUs)"));
        CHECK_FALSE(inventory.driver_problem);
    }
    SECTION("empty: no GPU, all hidden, and that is not a problem") {
        const FakeMachine fake(fixture("mixed-h100-a100.toml"), "");
        const Inventory inventory = fake.detect();
        CHECK(inventory.gpus.empty());
        CHECK(inventory.hidden_gpus == 2);
        CHECK(inventory.driver.present);
        CHECK_FALSE(inventory.driver_problem);
    }
    SECTION("CUDA's order differs from NVML's") {
        const FakeMachine fake(machine("cuda-order-differs.toml"), "0");
        const Inventory inventory = fake.detect();
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].index == 0);
        CHECK(inventory.gpus[0].uuid == a100_uuid);
        CHECK(inventory.gpus[0].nvml_index == 1);
        CHECK(inventory.hidden_gpus == 1);
    }
}

TEST_CASE("detect_gpus without NVIDIA libraries is a CPU-only machine", "[gpu][detect]") {
    DetectOptions options;
    options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    options.cuda_library = "/nonexistent/libcuda.so.1";
    const Inventory inventory = detect_gpus(options);
    CHECK(inventory.source == InventorySource::none);
    CHECK(inventory.gpus.empty());
    CHECK_FALSE(inventory.driver.present);
    CHECK_FALSE(inventory.driver_problem);
    REQUIRE(inventory.notes.size() == 1);
    CHECK(inventory.notes[0].find("no NVIDIA driver library found") != std::string::npos);
}

TEST_CASE("detect_gpus reports NVML init failures in words a user can act on", "[gpu][detect][faults]") {
    SECTION("driver not loaded") {
        const FakeMachine fake(machine("driver-not-loaded.toml"));
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        CHECK(inventory.gpus.empty());
        CHECK(inventory.driver_problem);
        CHECK_FALSE(inventory.driver.present);
        CHECK(has_fault(inventory, "NVIDIA kernel driver is not loaded"));
        CHECK_FALSE(has_note(inventory, "NVIDIA kernel driver is not loaded"));  // recorded once
    }
    SECTION("driver/library version mismatch") {
        const FakeMachine fake(machine("version-mismatch.toml"));
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        CHECK(inventory.gpus.empty());
        CHECK(inventory.driver_problem);
        CHECK_FALSE(inventory.driver.present);
        CHECK(has_fault(inventory, "NVML reports a driver/library version mismatch: the container's NVIDIA "
                                  "libraries do not match the host driver; restart the pod or fix the image"));
        CHECK(has_note(inventory, "CUDA error 803"));
    }
}

TEST_CASE("detect_gpus leaves out a lost GPU and says so", "[gpu][detect][faults]") {
    const FakeMachine fake(machine("gpu-lost.toml"));
    const Inventory inventory = fake.detect();
    INFO(all_notes(inventory));
    REQUIRE(inventory.gpus.size() == 1);
    CHECK(inventory.gpus[0].uuid == h100_uuid);
    CHECK(inventory.hidden_gpus == 0);
    CHECK(inventory.driver_problem);
    CHECK(has_fault(inventory, "NVML's GPU 1 has fallen off the bus"));
}

TEST_CASE("detect_gpus survives one call failing for one GPU of two", "[gpu][detect][faults]") {
    const FakeMachine fake(machine("one-call-fails.toml"));
    const Inventory inventory = fake.detect();
    INFO(all_notes(inventory));
    // libcuda still reads both; NVML's note says what failed.
    REQUIRE(inventory.gpus.size() == 2);
    CHECK(inventory.gpus[0].nvml_index == 0);
    CHECK(inventory.gpus[0].memory_mib == 81559);  // NVML's figure
    CHECK(inventory.gpus[1].memory_mib == 81440);  // libcuda's, as NVML's failed
    CHECK(inventory.driver_problem);
    CHECK(has_fault(inventory, "NVML's GPU 1 could not be read (nvmlDeviceGetMemoryInfo: Unknown Error (NVML error 999))"));
}

TEST_CASE("detect_gpus falls back to NVML when cuInit fails", "[gpu][detect][faults]") {
    SECTION("every GPU") {
        const FakeMachine fake(machine("cuda-init-fails.toml"));
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(inventory.gpus[1].name == "NVIDIA A100-SXM4-80GB");
        CHECK(inventory.gpus[1].compute_capability == ComputeCapability{8, 0});
        CHECK(inventory.driver.cuda == "13.0");
        CHECK(inventory.driver_problem);
        CHECK(has_note(inventory, "does not match the host's kernel driver (CUDA error 803)"));
    }
    SECTION("with CUDA_VISIBLE_DEVICES applied by provision") {
        const FakeMachine fake(machine("cuda-init-fails.toml"), "GPU-1b7e");
        const Inventory inventory = fake.detect();
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].index == 0);
        CHECK(inventory.gpus[0].nvml_index == 1);
        CHECK(inventory.hidden_gpus == 1);
    }
}

TEST_CASE("detect_gpus gives up on a hung driver after its time limit", "[gpu][detect][faults]") {
    SECTION("NVML hangs: libcuda still answers") {
        // A limit the healthy library answers well within on any machine,
        // and a hang far beyond it.
        FakeMachine fake(machine("nvml-hangs.toml"));
        fake.options.time_limit = std::chrono::milliseconds(5000);
        const auto start = std::chrono::steady_clock::now();
        const Inventory inventory = fake.detect();
        const auto took = std::chrono::steady_clock::now() - start;
        INFO(all_notes(inventory));
        CHECK(took < std::chrono::milliseconds(15000));  // given up at the limit, not after the fake's 20 s
        CHECK(inventory.driver_problem);
        CHECK(has_note(inventory, "NVML did not answer within 5 s"));
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].nvml_index == -1);
        CHECK(inventory.gpus[0].memory_mib == 81079);  // libcuda's figure
        CHECK(inventory.driver.cuda == "13.0");
        CHECK(inventory.driver.version.empty());
    }
    SECTION("cuInit hangs: NVML's list stands in") {
        FakeMachine fake(machine("cuda-hangs.toml"));
        fake.options.time_limit = std::chrono::milliseconds(5000);
        const auto start = std::chrono::steady_clock::now();
        const Inventory inventory = fake.detect();
        const auto took = std::chrono::steady_clock::now() - start;
        INFO(all_notes(inventory));
        CHECK(took < std::chrono::milliseconds(15000));
        CHECK(has_note(inventory, "libcuda (cuInit) did not answer within 5 s"));
        CHECK(inventory.gpus.size() == 2);
        CHECK(inventory.driver_problem);
    }
}

TEST_CASE("detect_gpus copes with drivers that lack optional functions", "[gpu][detect][faults]") {
    SECTION("old NVML: capability and CUDA version come from libcuda") {
        FakeMachine fake(fixture("mixed-a100-t4.toml"));
        fake.options.nvml_library = FAKE_NVML_OLD_LIBRARY;
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(inventory.gpus[1].compute_capability == ComputeCapability{7, 5});
        CHECK(inventory.gpus[1].nvml_index == 1);
        CHECK(inventory.driver.cuda == "13.0");
        CHECK(inventory.driver.version == "580.159.04");
        CHECK_FALSE(inventory.driver_problem);
    }
    SECTION("old libcuda: cuDeviceGetUuid stands in for cuDeviceGetUuid_v2") {
        FakeMachine fake(fixture("mixed-a100-t4.toml"));
        fake.options.cuda_library = FAKE_CUDA_OLD_LIBRARY;
        const Inventory inventory = fake.detect();
        REQUIRE(inventory.gpus.size() == 2);
        CHECK(inventory.gpus[0].uuid == a100_uuid);
        CHECK(inventory.gpus[0].nvml_index == 0);
    }
    SECTION("old NVML and no libcuda: the capability is unknown, and the note says so") {
        FakeMachine fake(fixture("t4.toml"));
        fake.options.nvml_library = FAKE_NVML_OLD_LIBRARY;
        fake.options.cuda_library = "/nonexistent/libcuda.so.1";
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        REQUIRE(inventory.gpus.size() == 1);
        CHECK(inventory.gpus[0].compute_capability == ComputeCapability{0, 0});
        CHECK(has_note(inventory, "compute capability of GPU 0 (Tesla T4) is unknown"));
        CHECK(has_note(inventory, "'compute' driver capability"));
        CHECK(inventory.driver.cuda.empty());
        CHECK(inventory.driver_problem);
    }
    SECTION("a library without NVML's required functions") {
        FakeMachine fake(fixture("h100.toml"));
        fake.options.nvml_library = FAKE_CUDA_LIBRARY;  // loads, but is not NVML
        const Inventory inventory = fake.detect();
        INFO(all_notes(inventory));
        CHECK(has_fault(inventory, "lacks nvmlInit_v2"));
        CHECK(inventory.driver_problem);
        REQUIRE(inventory.gpus.size() == 1);  // libcuda still answers
        CHECK(inventory.gpus[0].nvml_index == -1);
    }
}

