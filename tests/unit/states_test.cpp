// The states' words (docs/DESIGN.md): each enumerator to its word and back,
// and nothing else read as a state.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/states.h"

using namespace provision;

namespace {

// Every enumerator with its word: to_string gives the word, `parse` reads it
// back, and no other enumerator has it.
template <typename State, typename Parse>
void check_round_trips(const std::vector<std::pair<State, std::string_view>>& words, Parse parse) {
    for (const auto& [state, word] : words) {
        INFO(word);
        CHECK(to_string(state) == word);
        CHECK(parse(word) == std::optional<State>(state));
    }
}

}  // namespace

TEST_CASE("states: every check status round-trips", "[states]") {
    check_round_trips<CheckStatus>({{CheckStatus::passed, "passed"},
                                    {CheckStatus::failed, "failed"},
                                    {CheckStatus::unsupported, "unsupported"},
                                    {CheckStatus::error, "error"},
                                    {CheckStatus::timeout, "timeout"}},
                                   parse_check_status);
}

TEST_CASE("states: every validation status round-trips", "[states]") {
    check_round_trips<ValidationStatus>({{ValidationStatus::passed, "passed"},
                                         {ValidationStatus::failed, "failed"},
                                         {ValidationStatus::skipped, "skipped"}},
                                        parse_validation_status);
}

TEST_CASE("states: every validate mode round-trips", "[states]") {
    check_round_trips<ValidateMode>(
        {{ValidateMode::quick, "quick"}, {ValidateMode::full, "full"}, {ValidateMode::off, "off"}},
        parse_validate_mode);
}

TEST_CASE("states: every decision source round-trips", "[states]") {
    check_round_trips<DecisionSource>({{DecisionSource::automatic, "auto"},
                                       {DecisionSource::override, "override"},
                                       {DecisionSource::forced, "forced"}},
                                      parse_decision_source);
}

TEST_CASE("states: every health level (and verdict) round-trips, best first", "[states]") {
    check_round_trips<HealthLevel>(
        {{HealthLevel::ok, "ok"}, {HealthLevel::degraded, "degraded"}, {HealthLevel::failed, "failed"}},
        parse_health_level);
    CHECK(HealthLevel::ok < HealthLevel::degraded);
    CHECK(HealthLevel::degraded < HealthLevel::failed);
}

TEST_CASE("states: parsing refuses any other text", "[states]") {
    for (const std::string_view text : {"", "Passed", "passed ", " ok", "timed out", "skip", "automatic", "0", "1",
                                        "forced\n", "OFF", "fail"}) {
        INFO('"' << std::string(text) << '"');
        CHECK_FALSE(parse_check_status(text));
        CHECK_FALSE(parse_validation_status(text));
        CHECK_FALSE(parse_validate_mode(text));
        CHECK_FALSE(parse_decision_source(text));
        CHECK_FALSE(parse_health_level(text));
    }
    // A word of one kind of state is no other kind's.
    CHECK_FALSE(parse_check_status("skipped"));
    CHECK_FALSE(parse_validation_status("timeout"));
    CHECK_FALSE(parse_health_level("passed"));
    CHECK_FALSE(parse_decision_source("ok"));
    CHECK_FALSE(parse_validate_mode("auto"));
}
