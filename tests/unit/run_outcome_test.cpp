// The run's verdict and exit status, path by path (app/run_outcome.h).
#include <catch2/catch.hpp>

#include "app/run_outcome.h"

using namespace provision;

namespace {

RunFacts chosen() {
    RunFacts facts;
    facts.mechanism_chosen = true;
    facts.chosen_before_checks = true;
    return facts;
}

RunFacts nothing(DecisionOutcome outcome, bool chosen_before_checks) {
    RunFacts facts;
    facts.outcome = outcome;
    facts.chosen_before_checks = chosen_before_checks;
    return facts;
}

}  // namespace

TEST_CASE("nothing can serve: exit 4, unless only the checks stood in the way (exit 5)") {
    struct Row {
        const char* what;
        RunFacts facts;
        ExitCode expected;
    };
    for (const auto& row : std::vector<Row>{
             {"no mechanism fits the machine", nothing(DecisionOutcome::nothing_serves, false), ExitCode::no_mechanism},
             {"every candidate failed its check", nothing(DecisionOutcome::nothing_serves, true),
              ExitCode::validation_failed},
             {"the override cannot be served", nothing(DecisionOutcome::override_refused, false),
              ExitCode::no_mechanism},
             {"the override failed its check", nothing(DecisionOutcome::override_failed_validation, true),
              ExitCode::validation_failed},
         }) {
        INFO(row.what);
        RunFacts facts = row.facts;
        // Findings and throughput change nothing once nothing serves.
        facts.worst_finding = HealthLevel::degraded;
        CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::failed, row.expected});
        facts.worst_finding = HealthLevel::failed;
        CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::failed, row.expected});
    }
}

TEST_CASE("a chosen mechanism: ok, degraded, or failed, and the exit status with it") {
    struct Row {
        const char* what;
        void (*change)(RunFacts&);
        RunOutcome expected;
    };
    const RunOutcome ok{HealthLevel::ok, ExitCode::ok};
    const RunOutcome degraded{HealthLevel::degraded, ExitCode::ok};
    const RunOutcome failed{HealthLevel::failed, ExitCode::validation_failed};
    for (const auto& row : std::vector<Row>{
             {"chosen, checks passed", [](RunFacts& f) { f.validation = ValidationStatus::passed; }, ok},
             {"chosen, validation skipped", [](RunFacts&) {}, ok},
             {"chosen by override", [](RunFacts& f) { f.source = DecisionSource::override; }, ok},
             {"forced past its requirements", [](RunFacts& f) { f.source = DecisionSource::forced; }, degraded},
             {"fell back after a failed check",
              [](RunFacts& f) {
                  f.outcome = DecisionOutcome::fell_back_after_validation;
                  f.validation = ValidationStatus::failed;
              },
              degraded},
             {"a check failed that the choice does not need",
              [](RunFacts& f) { f.validation = ValidationStatus::failed; }, degraded},
             {"--check with a failed check", [](RunFacts& f) {
                  f.check_mode = true;
                  f.validation = ValidationStatus::failed;
              },
              failed},
             {"--check with checks passed",
              [](RunFacts& f) {
                  f.check_mode = true;
                  f.validation = ValidationStatus::passed;
              },
              ok},
             {"below the model's throughput", [](RunFacts& f) { f.below_expected_throughput = true; }, degraded},
             {"an ok finding", [](RunFacts& f) { f.worst_finding = HealthLevel::ok; }, ok},
             {"a degraded finding", [](RunFacts& f) { f.worst_finding = HealthLevel::degraded; }, degraded},
             {"a failed finding", [](RunFacts& f) { f.worst_finding = HealthLevel::failed; }, failed},
             {"a failed finding on a forced run",
              [](RunFacts& f) {
                  f.source = DecisionSource::forced;
                  f.worst_finding = HealthLevel::failed;
              },
              failed},
             {"a degraded finding with --check and a failed check",
              [](RunFacts& f) {
                  f.check_mode = true;
                  f.validation = ValidationStatus::failed;
                  f.worst_finding = HealthLevel::degraded;
              },
              failed},
         }) {
        INFO(row.what);
        RunFacts facts = chosen();
        row.change(facts);
        CHECK(decide_run_outcome(facts) == row.expected);
    }
}

TEST_CASE("a PROVISION_DTYPE a visible GPU cannot run: exit 4, or 5 after a failed check; forced: degraded") {
    RunFacts facts = chosen();
    facts.dtype_override = DtypeOverride::served;
    CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::ok, ExitCode::ok});
    facts.dtype_override = DtypeOverride::unsupported;
    CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::failed, ExitCode::no_mechanism});
    facts.dtype_override = DtypeOverride::failed_check;
    CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::failed, ExitCode::validation_failed});
    facts.dtype_override = DtypeOverride::forced;
    CHECK(decide_run_outcome(facts) == RunOutcome{HealthLevel::degraded, ExitCode::ok});
    // Nothing to serve the workload at all comes first.
    RunFacts none = nothing(DecisionOutcome::nothing_serves, false);
    none.dtype_override = DtypeOverride::failed_check;
    CHECK(decide_run_outcome(none) == RunOutcome{HealthLevel::failed, ExitCode::no_mechanism});
}
