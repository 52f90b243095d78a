// What each finding asks to be done, with the figures this run measured:
// the table of health/actions.h filled from the report's facts, once every
// finding is in.
#pragma once

#include <vector>

#include "health/action.h"
#include "recipe/recipe.h"
#include "report/report.h"

namespace provision {

std::vector<Action> finding_actions(const Report& report, const RecipeSet& recipes);

}  // namespace provision
