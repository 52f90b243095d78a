// The whole run, stage by stage: detect, classify, select, validate, write
// env, report, hand off.  Only detection, validation, the env file and exec
// touch the outside world.
#pragma once

#include "app/options.h"
#include "core/error.h"
#include "report/report.h"

namespace provision {

struct Plan {
    Report report;
    ExitCode exit_code = ExitCode::ok;
    RecipeSet recipes;  // what the report was decided with (the publishing step reads it)
};

class ProofMemory;
class XidWatch;

// What --repeat carries from round to round: each GPU's last proof, and the
// watch on the driver's Xid events.
struct RoundMemory {
    ProofMemory* proofs = nullptr;
    XidWatch* xids = nullptr;
};

// Detect through validate: everything up to the side effects.
Plan plan_run(const Options& options, RoundMemory memory = {});

// Writes the env file, publishes the labels and metrics, prints the report,
// and execs the command when there is one.  Returns the exit status (when it returns at all).
int carry_out(Plan plan, const Options& options);

}  // namespace provision
