// The formats stage: which number formats the visible GPUs run (bf16, fp8,
// ...; the recipes' number_format features, proven by the bundled checks),
// which features are on (their env settings), and the dtype the workload is
// handed (PROVISION_DTYPE).  Runs after the final selection, from plain
// values; pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/message.h"
#include "formats/dtype_choice.h"
#include "formats/format_state.h"
#include "gpu/inventory.h"
#include "packages/python_packages.h"
#include "recipe/recipe.h"
#include "select/selection.h"

namespace provision {

struct FormatsDecision {
    std::vector<FormatReport> formats;     // the number formats, by name
    std::map<std::string, bool> features;  // every feature (formats and settings such as tf32): on or off
    DtypeChoice dtype;
    // Package gates that keep a format off (notes); a PROVISION_DTYPE refused
    // (an error: the run fails) or forced (a warning).
    std::vector<Message> messages;
};

// `mechanism` is the selected one (its recipe may order the dtypes); `user`
// gives PROVISION_DTYPE and PROVISION_FORCE.  Throws
// Error(usage) for a PROVISION_DTYPE that names no dtype.
FormatsDecision decide_formats(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const std::string& mechanism, const PackageIndex& packages,
                               const CheckVerdicts& checks, const UserOverrides& user);

}  // namespace provision
