// The run's verdict and exit status from what the stages found: one pure
// function, so every path is a row of a table test.  (Usage errors, invalid
// input, unwritable output and a command that cannot run end the run
// earlier, as Error values carried to main: exits 2, 3, 6, 126 and 127.)
#pragma once

#include "core/error.h"
#include "core/states.h"

namespace provision {

struct RunFacts {
    bool mechanism_chosen = false;        // the final decision names a mechanism
    bool chosen_before_checks = false;    // the decision without check results named one
    DecisionOutcome outcome = DecisionOutcome::chosen;
    DecisionSource source = DecisionSource::automatic;
    ValidationStatus validation = ValidationStatus::skipped;
    bool check_mode = false;              // --check: a failed check fails the run
    bool below_expected_throughput = false;  // --validate=full found a GPU well below its figure
    HealthLevel worst_finding = HealthLevel::ok;  // health signals, driver faults, package findings
    DtypeOverride dtype_override = DtypeOverride::none;  // the user's PROVISION_DTYPE
    bool gpu_busy = false;                // a single run found a GPU other processes hold (not measured)
    BusyGpuPolicy busy_policy = BusyGpuPolicy::fail;
};

struct RunOutcome {
    HealthLevel verdict = HealthLevel::ok;
    ExitCode exit_code = ExitCode::ok;
    bool operator==(const RunOutcome&) const = default;
};

RunOutcome decide_run_outcome(const RunFacts& facts);

}  // namespace provision
