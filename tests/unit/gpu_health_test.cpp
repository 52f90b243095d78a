// The health signals probe_nvml reads, through the real dlopen code against
// the fake NVML of tests/fake_nvml acting out machines from TOML written here.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include "gpu/nvml_probe.h"
#include "test_support.h"

using namespace provision;
using test_support::TempDir;

namespace {

// One H100 whose [gpus.health] and [faults] tables hold `health` and `faults`.
std::string write_machine(const TempDir& dir, const std::string& health, const std::string& faults = "") {
    std::string text =
        "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n"
        "[[gpus]]\nname = \"NVIDIA H100 80GB HBM3\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
        "uuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n";
    if (!health.empty()) text += "\n[gpus.health]\n" + health + "\n";
    if (!faults.empty()) text += "\n[faults]\n" + faults + "\n";
    const std::string path = dir.file("machine.toml");
    test_support::write_file(path, text);
    return path;
}

// probe_nvml on the fake NVML acting out `machine`.
NvmlReport probe(const std::string& machine, const char* library = FAKE_NVML_LIBRARY) {
    setenv("PROVISION_FAKE_GPU_FIXTURE", machine.c_str(), 1);
    NvmlReport report = probe_nvml(library);
    unsetenv("PROVISION_FAKE_GPU_FIXTURE");
    return report;
}

GpuHealth health_of(const NvmlReport& report) {
    INFO(fmt::format("{}", fmt::join(report.notes, "\n")));
    REQUIRE(report.initialised);
    REQUIRE(report.gpus.size() == 1);
    return report.gpus[0].gpu.health;
}

}  // namespace

TEST_CASE("probe_nvml reads every health signal of a healthy GPU", "[gpu][health]") {
    TempDir dir;
    const NvmlReport report = probe(write_machine(dir, ""));
    const GpuHealth health = health_of(report);
    CHECK(health.uncorrected_ecc_errors == std::optional<std::uint64_t>(0));
    CHECK(health.retired_pages_pending == std::optional<bool>(false));
    CHECK(health.row_remap_pending == std::optional<bool>(false));
    CHECK(health.row_remap_failure == std::optional<bool>(false));
    CHECK(health.thermal_slowdown == std::optional<bool>(false));
    CHECK(health.power_brake_slowdown == std::optional<bool>(false));
    CHECK(health.hw_slowdown == std::optional<bool>(false));
    // nvmlDeviceGetMemoryInfo_v2 leaves the driver's reservation out.
    CHECK(health.memory_used_mib == std::optional<std::uint64_t>(0));
    CHECK(health.other_processes == std::optional<unsigned>(0));
    CHECK(health.mig_mode == std::optional<bool>(false));
    CHECK_FALSE(report.gpus[0].mig_enabled);
    CHECK(report.notes.empty());
    CHECK(report.faults.empty());
}

TEST_CASE("probe_nvml reads each unhealthy signal", "[gpu][health]") {
    TempDir dir;
    const GpuHealth health = health_of(probe(write_machine(dir,
                                                           "uncorrected_ecc_errors = 3\n"
                                                           "retired_pages_pending = true\n"
                                                           "row_remap_pending = true\n"
                                                           "row_remap_failure = true\n"
                                                           "thermal_slowdown = true\n"
                                                           "power_brake_slowdown = true\n"
                                                           "memory_used_mib = 20480\n"
                                                           "other_processes = 2\n"
                                                           "mig_mode = true\n")));
    CHECK(health.uncorrected_ecc_errors == std::optional<std::uint64_t>(3));
    CHECK(health.retired_pages_pending == std::optional<bool>(true));
    CHECK(health.row_remap_pending == std::optional<bool>(true));
    CHECK(health.row_remap_failure == std::optional<bool>(true));
    CHECK(health.thermal_slowdown == std::optional<bool>(true));
    CHECK(health.power_brake_slowdown == std::optional<bool>(true));
    // The hardware slowdown bit comes with the two above: not a third signal.
    CHECK(health.hw_slowdown == std::optional<bool>(false));
    CHECK(health.memory_used_mib == std::optional<std::uint64_t>(20480));
    CHECK(health.other_processes == std::optional<unsigned>(2));
    CHECK(health.mig_mode == std::optional<bool>(true));
}

TEST_CASE("probe_nvml reports a hardware slowdown that no thermal or power brake reason explains", "[gpu][health]") {
    TempDir dir;
    const GpuHealth health = health_of(probe(write_machine(dir, "hw_slowdown = true")));
    CHECK(health.hw_slowdown == std::optional<bool>(true));
    CHECK(health.thermal_slowdown == std::optional<bool>(false));
    CHECK(health.power_brake_slowdown == std::optional<bool>(false));
}

TEST_CASE("an old driver without the health functions leaves the signals unread, never an error",
          "[gpu][health][faults]") {
    TempDir dir;
    const NvmlReport report = probe(write_machine(dir, "uncorrected_ecc_errors = 3\nmig_mode = true"),
                                    FAKE_NVML_OLD_LIBRARY);
    const GpuHealth health = health_of(report);
    CHECK_FALSE(health.uncorrected_ecc_errors);
    CHECK_FALSE(health.retired_pages_pending);
    CHECK_FALSE(health.row_remap_pending);
    CHECK_FALSE(health.thermal_slowdown);
    CHECK_FALSE(health.other_processes);
    CHECK_FALSE(health.mig_mode);
    // Only the old memory call: its "used" counts the driver's 480 MiB.
    CHECK(health.memory_used_mib == std::optional<std::uint64_t>(480));
    CHECK_FALSE(report.problem);
    CHECK(report.faults.empty());
}

TEST_CASE("a signal the GPU does not support is unread without a note; another failure is a note",
          "[gpu][health][faults]") {
    TempDir dir;
    const NvmlReport report = probe(write_machine(
        dir, "uncorrected_ecc_errors = 3",
        "failing_calls = [{ function = \"nvmlDeviceGetTotalEccErrors\", gpu = 0, error = 3 },\n"
        "                 { function = \"nvmlDeviceGetMigMode\", gpu = 0, error = 999 }]"));
    const GpuHealth health = health_of(report);
    CHECK_FALSE(health.uncorrected_ecc_errors);
    CHECK_FALSE(health.mig_mode);
    CHECK(health.row_remap_failure == std::optional<bool>(false));
    REQUIRE(report.notes.size() == 1);
    CHECK(report.notes[0] == "NVML could not read a health signal of GPU 0 (nvmlDeviceGetMigMode: Unknown Error "
                             "(NVML error 999))");
    // The GPU itself was read: its health is not a driver fault.
    CHECK(report.gpus[0].readable);
    CHECK_FALSE(report.problem);
}

TEST_CASE("probe_nvml classes its failures as driver faults", "[gpu][health][faults]") {
    TempDir dir;
    SECTION("driver not loaded") {
        const NvmlReport report = probe(write_machine(dir, "", "nvml_init_error = 9"));
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::driver_not_loaded);
        CHECK(report.faults[0].nvml_index == -1);
    }
    SECTION("version mismatch") {
        const NvmlReport report = probe(write_machine(dir, "", "nvml_init_error = 18"));
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::version_mismatch);
        CHECK(report.faults[0].words.find("driver/library version mismatch") != std::string::npos);
    }
    SECTION("a lost GPU") {
        const NvmlReport report = probe(write_machine(dir, "", "lost_gpus = [0]"));
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::gpu_lost);
        CHECK(report.faults[0].nvml_index == 0);
    }
    SECTION("one call fails") {
        const NvmlReport report = probe(write_machine(
            dir, "", "failing_calls = [{ function = \"nvmlDeviceGetUUID\", gpu = 0, error = 999 }]"));
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::gpu_unreadable);
        CHECK(report.faults[0].nvml_index == 0);
    }
    SECTION("a library without NVML's functions") {
        const NvmlReport report = probe(write_machine(dir, ""), FAKE_CUDA_LIBRARY);
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::nvml_too_old);
        CHECK(report.faults[0].words.find("lacks nvmlInit_v2") != std::string::npos);
    }
    SECTION("no library") {
        const NvmlReport report = probe(write_machine(dir, ""), "/nonexistent/libnvidia-ml.so.1");
        REQUIRE(report.faults.size() == 1);
        CHECK(report.faults[0].kind == DriverFaultKind::nvml_missing);
    }
    SECTION("a probe that never answered is a hang") {
        const NvmlReport never;  // what detection keeps for a probe past its time limit
        const auto faults = nvml_driver_faults(never);
        REQUIRE(faults.size() == 1);
        CHECK(faults[0].kind == DriverFaultKind::nvml_hang);
        CHECK(nvml_driver_faults(probe(write_machine(dir, ""))).empty());
    }
}

namespace {

// Two GPUs named `first` and `second`; the first has three uncorrected ECC errors.
std::string write_pair(const TempDir& dir, const std::string& first, const std::string& second) {
    const std::string text =
        "[driver]\nversion = \"580.159.04\"\ncuda = \"13.0\"\n\n"
        "[[gpus]]\nname = \"" + first + "\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
        "uuid = \"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"\n[gpus.health]\nuncorrected_ecc_errors = 3\n\n"
        "[[gpus]]\nname = \"" + second + "\"\ncompute_capability = \"9.0\"\nmemory_mib = 81559\n"
        "uuid = \"GPU-1c2b8a4e-55aa-4a07-9b1e-3f5e8d2c7a10\"\n";
    const std::string path = dir.file("pair.toml");
    test_support::write_file(path, text);
    return path;
}

NvmlReport probe_as(const std::string& machine, const CudaEnvironment& workload) {
    setenv("PROVISION_FAKE_GPU_FIXTURE", machine.c_str(), 1);
    NvmlReport report = probe_nvml(FAKE_NVML_LIBRARY, workload);
    unsetenv("PROVISION_FAKE_GPU_FIXTURE");
    REQUIRE(report.initialised);
    REQUIRE(report.gpus.size() == 2);
    return report;
}

}  // namespace

TEST_CASE("probe_nvml reads the health of the GPUs the workload sees, and of every GPU where it cannot tell",
          "[gpu][health]") {
    TempDir dir;
    const std::string one_model = write_pair(dir, "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3");
    // GPU 1 alone: GPU 0's health is not read, its identity is.
    const NvmlReport second = probe_as(one_model, {std::string("1"), std::nullopt});
    CHECK_FALSE(second.gpus[0].gpu.health.uncorrected_ecc_errors.has_value());
    CHECK(second.gpus[0].gpu.uuid == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    CHECK(second.gpus[0].gpu.health.mig_mode == std::optional<bool>(false));  // needed to know the view
    CHECK(second.gpus[1].gpu.health.uncorrected_ecc_errors == std::optional<std::uint64_t>(0));
    // By UUID prefix, and unset: the named GPU, and every GPU.
    CHECK(probe_as(one_model, {std::string("GPU-8932"), std::nullopt}).gpus[0].gpu.health.uncorrected_ecc_errors ==
          std::optional<std::uint64_t>(3));
    const NvmlReport every = probe_as(one_model, {});
    CHECK(every.gpus[0].gpu.health.uncorrected_ecc_errors == std::optional<std::uint64_t>(3));
    CHECK(every.gpus[1].gpu.health.uncorrected_ecc_errors == std::optional<std::uint64_t>(0));
    // GPUs of two models, named by index: CUDA's order may not be NVML's, so every GPU is read.
    const NvmlReport mixed = probe_as(write_pair(dir, "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"),
                                      {std::string("1"), std::nullopt});
    CHECK(mixed.gpus[0].gpu.health.uncorrected_ecc_errors == std::optional<std::uint64_t>(3));
    CHECK(mixed.gpus[1].gpu.health.uncorrected_ecc_errors == std::optional<std::uint64_t>(0));
}
