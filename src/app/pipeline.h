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

// Detect through validate: everything up to the side effects.  `proofs`
// (--repeat) carries each GPU's last proof from round to round.
Plan plan_run(const Options& options, ProofMemory* proofs = nullptr);

// Writes the env file, publishes the labels and metrics, prints the report,
// and execs the command when there is one.  Returns the exit status (when it returns at all).
int carry_out(Plan plan, const Options& options);

}  // namespace provision
