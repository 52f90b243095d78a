// Whether a set of bundled checks proved a hardware path on this node: a
// mechanism's (its recipe's `checks`) or a feature's (TF32).  Read from the
// finished report's check outcomes, with the recipes' ranges telling where a
// check cannot run at all, so that a simulated or unvalidated node still
// says "unsupported" where the hardware rules a path out.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/inventory.h"
#include "recipe/recipe.h"
#include "report/report.h"

namespace provision {

enum class ProofState {
    passed,       // every check passed on every visible GPU
    failed,       // a check failed, errored or timed out on some GPU
    unsupported,  // some GPU cannot run a check (outside its range), or there is no GPU
    skipped,      // validation did not run (off, simulated, no kernels in this build)
    unverified,   // validation ran, but not these checks on every GPU
};

// All states, in the order above (for a metric that lists each).
const std::vector<ProofState>& all_proof_states();
std::string_view to_string(ProofState state);

// The state of `checks` across `inventory`'s GPUs, worst first: failed,
// unsupported, then passed when every (GPU, check) passed, else skipped or
// unverified.  An empty `checks` proves nothing: unverified.
ProofState prove(const std::vector<std::string>& checks, const Inventory& inventory,
                 const std::map<std::string, CheckSpec>& check_specs, const ValidationSummary& validation);

}  // namespace provision
