// What the publishing stage is made from: a finished run (its report and
// the recipes it was decided with), or a run that stopped before it had a
// report (a usage error, a malformed recipe or fixture), which must still
// replace what an earlier run published.
#pragma once

#include <chrono>
#include <string>

#include "core/error.h"
#include "recipe/recipe.h"
#include "report/report.h"

namespace provision {

struct PublishedRun {
    const Report* report = nullptr;      // nullptr: the run stopped before a report existed (exits 2, 3)
    const RecipeSet* recipes = nullptr;  // the recipes the report was decided with; nullptr with no report
    ExitCode exit_code = ExitCode::ok;   // what the run exits with (or hands off with: 0)
    std::chrono::system_clock::time_point time;  // when the run ended
    std::string recipes_digest;          // the built-in recipes' digest, or "replaced" (PROVISION_BUILTIN_RECIPES)
    double phases_from_ms = 0;           // the zero of the report's phase timings: 0, or when a --repeat round began
};

// Seconds since the Unix epoch, as GPU Feature Discovery's timestamp label writes them.
inline long long unix_seconds(std::chrono::system_clock::time_point time) {
    return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

}  // namespace provision
