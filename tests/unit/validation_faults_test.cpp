// The real validation worker (provision __check-worker) dying under the
// runner: a crash or a kill of one GPU's worker is contained, reported per
// check with the signal, and the other GPUs' checks are unaffected.  Needs
// the built provision binary beside the tests (ctest builds it first).
#include <unistd.h>

#include <string>

#include <catch2/catch.hpp>

#include "support/reliability_record.h"
#include "kernels/fault_injection.h"
#include "validate/validation.h"

using namespace provision;

namespace {

const std::string kBinary = std::string(PROVISION_BINARY_DIR) + "/provision";

ValidationOptions with_fault(const std::string& fault) {
    ValidationOptions options;
    options.self_exe = kBinary;
    options.timeout_s = 20;
    options.fault = fault;
    return options;
}

}  // namespace

TEST_CASE("worker faults: a crashing or killed worker is contained and named", "[validation][faults]") {
    if (access(kBinary.c_str(), X_OK) != 0) {
        WARN("skipped: " << kBinary << " is not built");
        return;
    }
    if (!kFaultInjection) {
        WARN("skipped: built without fault injection (PROVISION_FAULT_INJECTION=OFF)");
        return;
    }
    for (const auto& [fault, signal] : {std::pair{"crash", "signal 11"}, std::pair{"killed", "signal 9"}}) {
        INFO(fault);
        // GPU 0's worker dies at its second check; the spec names the check on
        // every GPU, so GPU 1's worker dies too, on its own.
        const auto outcomes = run_validation({{0, {"attention.bf16", "gemm.tf32"}}, {1, {"gemm.tf32"}}},
                                             with_fault(std::string("gemm.tf32=") + fault));
        REQUIRE(outcomes.size() == 3);
        CHECK(outcomes[0].name == "attention.bf16");
        // Its result was printed before the worker died (whatever it is on this build).
        CHECK_THAT(outcomes[0].detail, !Catch::Contains("died of"));
        CHECK(outcomes[1].name == "gemm.tf32");
        CHECK(outcomes[1].status == CheckStatus::error);
        CHECK_THAT(outcomes[1].detail, Catch::Contains(signal));
        CHECK(outcomes[2].gpu == 1);
        CHECK(outcomes[2].status == CheckStatus::error);
        CHECK_THAT(outcomes[2].detail, Catch::Contains(signal));
        reliability::record("validation", std::string("the check worker of a GPU ") +
                                              (std::string(fault) == "crash" ? "crashes (SIGSEGV)" : "is killed (SIGKILL)") +
                                              " during a check",
                            "contained in the child: that check reports error naming the signal; checks already "
                            "done keep their results; provision goes on by the policy",
                            "the result of the check that was running");
    }
}

TEST_CASE("worker faults: a fault spec for another check changes nothing", "[validation][faults]") {
    if (access(kBinary.c_str(), X_OK) != 0) {
        WARN("skipped: " << kBinary << " is not built");
        return;
    }
    if (!kFaultInjection) {
        WARN("skipped: built without fault injection (PROVISION_FAULT_INJECTION=OFF)");
        return;
    }
    const auto outcomes = run_validation({{0, {"attention.bf16"}}}, with_fault("gemm.tf32=crash"));
    REQUIRE(outcomes.size() == 1);
    CHECK_THAT(outcomes[0].detail, !Catch::Contains("died of"));
}
