// The dtype handed to the workload as PROVISION_DTYPE: the first dtype of
// the recipes' order whose format every visible GPU runs, or the user's own
// PROVISION_DTYPE, refused where a visible GPU cannot run it.  Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/states.h"
#include "core/user_overrides.h"
#include "formats/format_state.h"
#include "recipe/recipe.h"

namespace provision {

struct DtypeChoice {
    std::string recommended;     // "bfloat16"
    std::string reason;          // why, naming the GPU that ruled out a better one
    std::string order_source;    // "[dtypes]", "the flex mechanism's recipe", "the 'sglang' workload's recipe"
    std::vector<std::string> order;
    std::string value;           // what PROVISION_DTYPE carries: the user's when kept, else the recommendation
    std::string user_value;      // PROVISION_DTYPE as the user wrote it; empty when not set
    DtypeOverride user = DtypeOverride::none;
    std::string problem;         // why the user's dtype cannot be served (refused or forced)
};

// `formats` are the recipes' number formats as judge_format saw them.
// `user`: the user's PROVISION_DTYPE and PROVISION_FORCE.  Throws
// Error(usage) for a PROVISION_DTYPE that names no dtype of the recipes,
// listing the valid ones.
DtypeChoice choose_dtype(const std::vector<FormatReport>& formats, const RecipeSet& recipes,
                         const WorkloadSpec& workload, const std::string& mechanism, const UserOverrides& user);

}  // namespace provision
