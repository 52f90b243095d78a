#include "core/states.h"

#include <initializer_list>

namespace provision {
namespace {

// The state whose word is `text`, among `states`.
template <typename State>
std::optional<State> parse_among(std::initializer_list<State> states, std::string_view text) {
    for (const State state : states)
        if (to_string(state) == text) return state;
    return std::nullopt;
}

}  // namespace

std::string_view to_string(CheckStatus status) {
    switch (status) {
        case CheckStatus::passed: return "passed";
        case CheckStatus::failed: return "failed";
        case CheckStatus::unsupported: return "unsupported";
        case CheckStatus::error: return "error";
        case CheckStatus::timeout: return "timeout";
        case CheckStatus::not_measured: return "not-measured";
    }
    return "error";
}

std::string_view to_string(ValidationStatus status) {
    switch (status) {
        case ValidationStatus::passed: return "passed";
        case ValidationStatus::failed: return "failed";
        case ValidationStatus::skipped: return "skipped";
    }
    return "failed";
}

std::string_view to_string(BusyGpuPolicy policy) { return policy == BusyGpuPolicy::share ? "share" : "fail"; }

std::optional<BusyGpuPolicy> parse_busy_gpu_policy(std::string_view text) {
    return parse_among({BusyGpuPolicy::fail, BusyGpuPolicy::share}, text);
}

std::string_view to_string(ValidateMode mode) {
    switch (mode) {
        case ValidateMode::quick: return "quick";
        case ValidateMode::full: return "full";
        case ValidateMode::off: return "off";
    }
    return "off";
}

std::string_view to_string(DecisionSource source) {
    switch (source) {
        case DecisionSource::automatic: return "auto";
        case DecisionSource::override: return "override";
        case DecisionSource::forced: return "forced";
    }
    return "forced";
}

std::string_view to_string(HealthLevel level) {
    switch (level) {
        case HealthLevel::ok: return "ok";
        case HealthLevel::degraded: return "degraded";
        case HealthLevel::failed: return "failed";
    }
    return "failed";
}

std::optional<CheckStatus> parse_check_status(std::string_view text) {
    return parse_among({CheckStatus::passed, CheckStatus::failed, CheckStatus::unsupported, CheckStatus::error,
                        CheckStatus::timeout, CheckStatus::not_measured},
                       text);
}

std::optional<ValidationStatus> parse_validation_status(std::string_view text) {
    return parse_among({ValidationStatus::passed, ValidationStatus::failed, ValidationStatus::skipped}, text);
}

std::optional<ValidateMode> parse_validate_mode(std::string_view text) {
    return parse_among({ValidateMode::quick, ValidateMode::full, ValidateMode::off}, text);
}

std::optional<DecisionSource> parse_decision_source(std::string_view text) {
    return parse_among({DecisionSource::automatic, DecisionSource::override, DecisionSource::forced}, text);
}

std::optional<HealthLevel> parse_health_level(std::string_view text) {
    return parse_among({HealthLevel::ok, HealthLevel::degraded, HealthLevel::failed}, text);
}

}  // namespace provision
