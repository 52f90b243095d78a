// The states a run moves through, as types: a check's status, the
// validation's, the validation mode, where the selected mechanism came from
// and how the selection ended, and a finding's level (which is also a run's
// verdict).  They become text only at the edges: the worker protocol, the
// JSON report and the summary, the env file header, the command line.
// to_string gives the word docs/DESIGN.md lists; parse_* reads exactly
// that word back and gives nullopt for any other text.
#pragma once

#include <optional>
#include <string_view>

namespace provision {

// One check on one GPU.  A worker reports the first four; a check whose
// worker was killed at the time limit is a timeout.
// not_measured: the check could not run on its GPU for a reason that says
// nothing of the GPU (other processes hold it): it proves nothing either way.
enum class CheckStatus { passed, failed, unsupported, error, timeout, not_measured };

// The validation stage as a whole: skipped when no check ran.
enum class ValidationStatus { passed, failed, skipped };

// What a single run does with a GPU other processes hold (no room for its
// checks' context): fail (exit 7, no handoff: a job should not start on a
// GPU that is taken) or share (go on, degraded: the GPUs are shared on
// purpose).  --repeat leaves a busy GPU alone whatever the policy.
enum class BusyGpuPolicy { fail, share };
std::string_view to_string(BusyGpuPolicy policy);
std::optional<BusyGpuPolicy> parse_busy_gpu_policy(std::string_view text);

// --validate: quick, full (adds a throughput measurement) or off.
enum class ValidateMode { quick, full, off };

// Where the selected mechanism came from: "auto", "override", "forced".
enum class DecisionSource { automatic, override, forced };

// How a selection ended.  Never written as text.
enum class DecisionOutcome {
    chosen,                      // the first mechanism that can serve, or the override (as asked or forced)
    fell_back_after_validation,  // chosen after a failed check rejected one the order puts first
    nothing_serves,              // no mechanism in the order can serve this machine
    override_refused,            // the override cannot serve: the workload, the hardware or the packages
    override_failed_validation,  // the override could serve but for a failed check
};

// What became of a user's PROVISION_DTYPE.  Never written as text.
enum class DtypeOverride {
    none,          // not set (or "auto"): the recommendation is written
    served,        // every visible GPU runs it: kept
    forced,        // a visible GPU cannot run it, kept anyway with PROVISION_FORCE=1
    unsupported,   // a visible GPU is outside its format's range: refused
    failed_check,  // its format failed a check on a visible GPU: refused
};

// A finding's level and a run's verdict, from best to worst (worst_level
// compares them).
enum class HealthLevel { ok, degraded, failed };

std::string_view to_string(CheckStatus status);
std::string_view to_string(ValidationStatus status);
std::string_view to_string(ValidateMode mode);
std::string_view to_string(DecisionSource source);
std::string_view to_string(HealthLevel level);

std::optional<CheckStatus> parse_check_status(std::string_view text);
std::optional<ValidationStatus> parse_validation_status(std::string_view text);
std::optional<ValidateMode> parse_validate_mode(std::string_view text);
std::optional<DecisionSource> parse_decision_source(std::string_view text);
std::optional<HealthLevel> parse_health_level(std::string_view text);

}  // namespace provision
