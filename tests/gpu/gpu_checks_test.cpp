// The checks themselves on the first GPU: they pass where the hardware has
// the path, refuse where it has not, fail on a planted wrong result, and
// name CUDA errors.
#include "gpu_test_support.h"

using namespace provision;
using namespace provision::gpu_tests;

TEST_CASE("every check passes on this GPU or says why it cannot run here", "[gpu]") {
    const auto device = device_or_skip();
    if (!device) return;
    for (const std::string& name : kernels::check_names()) {
        const kernels::CheckResult result = kernels::run_check(device->index, name, {});
        print_row("quick", *device, result);
        INFO(name << ": " << result.detail);
        if (!hardware_supports(*device, name)) {
            CHECK(result.status == kernels::CheckStatus::unsupported);
        } else if (name.ends_with(".wgmma") && result.status == kernels::CheckStatus::unsupported) {
            CHECK(result.detail.find("this build has no") != std::string::npos);
        } else {
            CHECK(result.status == kernels::CheckStatus::passed);
            CHECK(result.max_rel_error <= result.tolerance);
            CHECK(result.ms > 0);
        }
    }
}

TEST_CASE("a planted wrong result fails its check", "[gpu]") {
    const auto device = device_or_skip();
    if (!device) return;
    kernels::CheckOptions options;
    options.fault = "wrong-result";
    for (const std::string& name : kernels::check_names()) {
        if (!hardware_supports(*device, name)) continue;
        const kernels::CheckResult result = kernels::run_check(device->index, name, options);
        if (result.status == kernels::CheckStatus::unsupported) continue;  // a build without the Hopper kernel
        print_row("wrong-result", *device, result);
        INFO(name << ": " << result.detail);
        CHECK(result.status == kernels::CheckStatus::failed);
        CHECK_FALSE(result.max_rel_error <= result.tolerance);
    }
}

TEST_CASE("the same seed gives the same error; a fresh one new inputs", "[gpu]") {
    const auto device = device_or_skip();
    if (!device) return;
    kernels::CheckOptions options;
    options.seed = 1234;
    const auto first = kernels::run_check(device->index, "attention.fp16", options);
    const auto second = kernels::run_check(device->index, "attention.fp16", options);
    options.seed = 4321;
    const auto other = kernels::run_check(device->index, "attention.fp16", options);
    REQUIRE(first.status == kernels::CheckStatus::passed);
    CHECK(first.max_rel_error == second.max_rel_error);  // deterministic kernel, same inputs
    CHECK(first.max_rel_error != other.max_rel_error);
}

TEST_CASE("full mode measures throughput at the large shapes", "[gpu][full]") {
    const auto device = device_or_skip();
    if (!device) return;
    kernels::CheckOptions options;
    options.full = true;
    for (const std::string& name : kernels::check_names()) {
        if (!hardware_supports(*device, name)) continue;
        const kernels::CheckResult result = kernels::run_check(device->index, name, options);
        if (result.status == kernels::CheckStatus::unsupported) continue;
        print_row("full", *device, result);
        INFO(name << ": " << result.detail);
        CHECK(result.status == kernels::CheckStatus::passed);
        CHECK(result.tflops > 0);
    }
}

TEST_CASE("CUDA errors come back by name", "[gpu]") {
    const auto device = device_or_skip();
    if (!device) return;
    const kernels::CheckResult result = kernels::run_check(1000, "attention.fp16", {});
    CHECK(result.status == kernels::CheckStatus::error);
    CHECK(result.detail.find("cudaErrorInvalidDevice") != std::string::npos);
    const kernels::CheckResult unknown = kernels::run_check(device->index, "attention.fp8", {});
    CHECK(unknown.status == kernels::CheckStatus::error);
}
