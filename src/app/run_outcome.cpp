#include "app/run_outcome.h"

namespace provision {

RunOutcome decide_run_outcome(const RunFacts& facts) {
    RunOutcome result;
    if (!facts.mechanism_chosen) {
        result.verdict = HealthLevel::failed;
        // The checks alone stood in the way: the mechanism asked for, or every
        // one that could serve before the checks ran, failed its check.
        const bool checks_refused = facts.outcome == DecisionOutcome::override_failed_validation ||
                                    (facts.outcome == DecisionOutcome::nothing_serves && facts.chosen_before_checks);
        result.exit_code = checks_refused ? ExitCode::validation_failed : ExitCode::no_mechanism;
        return result;
    }
    // A PROVISION_DTYPE a visible GPU cannot run is refused like a mechanism
    // override: exit 4 outside the format's range, exit 5 after a failed check.
    if (facts.dtype_override == DtypeOverride::unsupported || facts.dtype_override == DtypeOverride::failed_check) {
        result.verdict = HealthLevel::failed;
        result.exit_code = facts.dtype_override == DtypeOverride::unsupported ? ExitCode::no_mechanism
                                                                               : ExitCode::validation_failed;
        return result;
    }
    const bool degraded = facts.source == DecisionSource::forced || facts.dtype_override == DtypeOverride::forced ||
                          facts.outcome == DecisionOutcome::fell_back_after_validation ||
                          facts.validation == ValidationStatus::failed || facts.below_expected_throughput;
    result.verdict = degraded ? HealthLevel::degraded : HealthLevel::ok;
    if (facts.check_mode && facts.validation == ValidationStatus::failed) {
        result.verdict = HealthLevel::failed;
        result.exit_code = ExitCode::validation_failed;
    }
    // A GPU others hold was not measured: a job sharing GPUs on purpose goes
    // on, degraded; any other stops here (exit 7), before it starts on a GPU
    // that is taken.
    if (facts.gpu_busy && facts.busy_policy == BusyGpuPolicy::fail) {
        result.verdict = HealthLevel::failed;
        if (result.exit_code == ExitCode::ok) result.exit_code = ExitCode::gpu_busy;
    } else if (facts.gpu_busy && result.verdict == HealthLevel::ok) {
        result.verdict = HealthLevel::degraded;
    }
    // Findings only make it worse: a failed one stops the run as an unhealthy GPU does.
    if (facts.worst_finding == HealthLevel::failed) {
        result.verdict = HealthLevel::failed;
        if (result.exit_code == ExitCode::ok) result.exit_code = ExitCode::validation_failed;
    } else if (facts.worst_finding == HealthLevel::degraded && result.verdict == HealthLevel::ok) {
        result.verdict = HealthLevel::degraded;
    }
    return result;
}

}  // namespace provision
