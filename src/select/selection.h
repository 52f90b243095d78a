// Chooses the attention mechanism: walks the workload's preference order and
// takes the first mechanism whose every requirement holds on every visible
// GPU.  Pure: everything it needs comes in as values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/states.h"
#include "core/user_overrides.h"
#include "gpu/inventory.h"
#include "packages/python_packages.h"
#include "recipe/recipe.h"

namespace provision {

// What the validation stage found for one check on one GPU.
enum class CheckState { passed, failed, unsupported, not_run };

struct CheckVerdict {
    CheckState state = CheckState::not_run;
    std::string summary;  // "max_rel_error 0.41 > tolerance 0.02", "timed out after 5 s"
};

// (gpu index, check name) -> verdict
using CheckVerdicts = std::map<std::pair<int, std::string>, CheckVerdict>;

struct Override {
    std::string variable;   // PROVISION_ATTENTION or a workload's own variable
    std::string value;      // as the user wrote it
    std::string mechanism;  // canonical name
    bool forced = false;    // PROVISION_FORCE=1
};

struct Candidate {
    std::string mechanism;
    bool accepted = false;
    std::vector<std::string> reasons;  // why it was rejected (empty when accepted)
    // The workload can use it and the visible GPUs and the driver can run
    // it: what it lacks, if anything, is installed software.
    bool hardware_fits = false;
};


struct Decision {
    std::string mechanism;               // empty when nothing can serve
    DecisionSource source = DecisionSource::automatic;
    std::string reason;
    std::string preference_key;          // architecture whose order was used
    std::vector<Candidate> candidates;   // in preference order
    std::vector<std::string> warnings;
    DecisionOutcome outcome = DecisionOutcome::nothing_serves;
};

// The first candidate ahead of the selected one (or of all, when nothing
// was selected) that the GPUs and the driver could run but the installed
// software does not serve: what --explain names as best for these GPUs.
// nullptr when none.
const Candidate* best_not_served(const Decision& decision);

// The user's PROVISION_ATTENTION, then the workload's override variables
// (names its recipe chooses) from `environment`: the first that names a
// mechanism wins.  "auto" (or empty) means "choose" and passes the word to
// the next variable.  Throws Error(usage) for a name that is no mechanism,
// listing the valid ones.
std::optional<Override> read_override(const UserOverrides& user, const std::map<std::string, std::string>& environment,
                                      const WorkloadSpec& workload, const RecipeSet& recipes);

// Whether the workload can use `mechanism` at all: its recipe orders it for
// some architecture, has flags for it, or states requirements for it.
bool workload_accepts(const WorkloadSpec& workload, const std::string& mechanism);

// The mechanisms the workload can use, sorted.
std::vector<std::string> accepted_mechanisms(const WorkloadSpec& workload);

// Why `mechanism` cannot serve this machine (empty: it can).
std::vector<std::string> unmet_requirements(const MechanismSpec& mechanism, const Inventory& inventory,
                                            const PackageIndex& packages, const CheckVerdicts& checks);

// The visible GPUs' architectures, each followed by its family where that is
// another name, in GPU order (repeats kept): the keys of the recipes'
// per-architecture tables (packages_for, min_driver_cuda_for, ...).
std::vector<std::string> architectures_of(const Inventory& inventory);

// The key whose preference order applies: "cpu" without GPUs, else the
// least capable visible GPU's architecture, else its family ("default" when
// the workload has an order for neither).
std::string preference_key(const Inventory& inventory, const WorkloadSpec& workload);

Decision select_mechanism(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                          const PackageIndex& packages, const std::optional<Override>& override_request,
                          const CheckVerdicts& checks);

}  // namespace provision
