// The validate stage as the pipeline drives it: the GPU workers started as
// early as possible (every expected GPU's before anything is read; detection
// then stops those it does not confirm and starts any it did not expect),
// given the checks the first selection needs, and the results turned into
// the verdicts the second selection takes.  A run that validates nothing
// (--no-validate, a fixture, a machine without GPUs, a build without
// kernels) never starts one.  A busy GPU (health/busy_gpu.h) is never a
// failed check: under --repeat it gets no worker and its last proof stands;
// in a single run a worker that finds no room for a context beside other
// processes says the GPU is busy.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/copy_check.h"
#include "gpu/inventory.h"
#include "pod/pod.h"
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/timings.h"
#include "select/selection.h"
#include "validate/validation.h"

namespace provision {

// What --repeat remembers of each GPU between rounds, by UUID: its checks'
// outcomes and when they ran, to stand while the GPU is busy.
class ProofMemory {
public:
    struct Proof {
        std::vector<CheckOutcome> checks;
        std::int64_t at = 0;  // Unix seconds
    };
    const Proof* find(const std::string& uuid) const;
    void remember(const std::string& uuid, Proof proof);

private:
    std::map<std::string, Proof> proofs_;
};

// What the validate stage is handed (app/stage_settings.h builds it).
struct ValidationSettings {
    ValidationOptions workers;                          // how the GPU workers run
    std::string off_by;                                 // what turned validation off, for the skip reason
    std::string nvml_library;                           // the link error counters are read again through it
    std::optional<std::string> cuda_visible_devices;    // the workload's: which GPUs it is expected to see
    bool simulated_machine = false;                     // a GPU fixture: nothing to open
    bool every_mechanism = false;                       // labels or metrics: prove every mechanism's hardware path
    std::optional<std::string> device_folder;           // PROVISION_TEST_DEV: in place of /dev
};

class ValidationStep {
public:
    // Starts a worker for every GPU the workload is expected to see
    // (validate/expected_gpus.h) when validation will run; with `proofs`
    // (--repeat) only once detection has said which GPUs are idle.
    explicit ValidationStep(const ValidationSettings& settings, ProofMemory* proofs = nullptr);

    // One worker per visible GPU, each seeing that GPU alone (under --repeat
    // each idle one); none when no check can run on this inventory.
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
    // --validate=full also all-reduces across the workers with that NCCL;
    // on a job over several nodes (`nodes` given) across every node's
    // workers, once the nodes have met; a node that cannot take part still
    // comes to the meeting and says why.
    CopyChecks run(const Inventory& inventory, const RecipeSet& recipes, const Decision& first, const NcclFacts& nccl,
                   NodeMeeting* nodes,
                   ValidationSummary& summary, PhaseClock& clock);

private:
    // Why nothing is validated on this inventory; nullopt when checks can run.
    std::optional<std::string> skip_reason(const Inventory& inventory) const;
    // Under --repeat, why a GPU is left alone this round; nullopt otherwise.
    std::optional<std::string> left_alone(const Gpu& gpu) const;
    // The busy GPUs' entries, their remembered proofs' checks, and this
    // round's proofs remembered.
    void settle_proofs(const Inventory& inventory, const std::vector<int>& full_gpus,
                       std::uint64_t memory_in_use_min_mib, ValidationSummary& summary);

    ValidationOptions validation_;
    std::string validate_off_by_;  // the flag or variable that turned validation off, for the skip reason
    std::string nvml_library_;  // the link error counters are read again through it after the copies
    bool can_validate_ = false;
    bool every_mechanism_ = false;  // labels or metrics: prove every mechanism's hardware path
    ProofMemory* proofs_ = nullptr;  // --repeat
    WorkerPool workers_;
};

CheckVerdicts verdicts_of(const ValidationSummary& summary);

}  // namespace provision
