// The validate stage as the pipeline drives it: the GPU workers started as
// early as possible (every expected GPU's before anything is read; detection
// then stops those it does not confirm and starts any it did not expect),
// given the checks the first selection
// needs, and the results turned into the verdicts the second selection
// takes.  A run that validates nothing (--no-validate, a fixture, a machine
// without GPUs, a build without kernels) never starts one.
#pragma once

#include <optional>

#include "app/options.h"
#include "gpu/copy_check.h"
#include "gpu/inventory.h"
#include "nccl/nccl_paths.h"
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/timings.h"
#include "select/selection.h"
#include "validate/validation.h"

namespace provision {

class ValidationStep {
public:
    // Starts a worker for every GPU the workload is expected to see
    // (validate/expected_gpus.h) when validation will run.
    explicit ValidationStep(const Options& options);

    // One worker per visible GPU, each seeing that GPU alone; none when no
    // check can run on this inventory.
    void follow(const Inventory& inventory);

    // Runs the checks of every mechanism the first decision found able to
    // serve (of every mechanism, when the node's labels or metrics are
    // published: a node's hardware paths do not depend on the packages
    // installed where provision runs), and of the features, then the copy
    // checks of the links (each GPU's host link, each pair NVML says has
    // peer access) between the GPUs whose workers run; fills `summary` and
    // returns the copies, marks worker_ready and checks on `clock`.
    // The peer copies follow the path the workload's NCCL takes (`nccl`),
    // and its host memory is checked where it comes from cuMem.
    CopyChecks run(const Inventory& inventory, const RecipeSet& recipes, const Decision& first, const NcclPaths& nccl,
                   ValidationSummary& summary, PhaseClock& clock);

private:
    // Why nothing is validated on this inventory; nullopt when checks can run.
    std::optional<std::string> skip_reason(const Inventory& inventory) const;

    ValidationOptions validation_;
    bool can_validate_ = false;
    bool every_mechanism_ = false;  // labels or metrics: prove every mechanism's hardware path
    CheckWorkers workers_;
};

CheckVerdicts verdicts_of(const ValidationSummary& summary);

}  // namespace provision
