// What a run found and decided, rendered for people (stderr) and for
// scripts (JSON on stdout, schema 1 in docs/DESIGN.md).
#pragma once

#include <string>
#include <vector>

#include "core/states.h"
#include "env/env_settings.h"
#include "formats/formats.h"
#include "gpu/inventory.h"
#include "health/findings.h"
#include "health/torch_findings.h"
#include "pod/pod.h"
#include "python/workload_python.h"
#include "report/timings.h"
#include "select/selection.h"
#include "validate/validation.h"

namespace provision {

struct ValidationSummary {
    ValidationStatus status = ValidationStatus::skipped;
    std::string reason;              // why skipped, or what failed
    std::vector<CheckOutcome> checks;
    double wall_ms = 0;
};

struct Report {
    Inventory inventory;
    std::string workload;
    WorkloadPython python;           // the interpreter and the folders its packages were read from
    Decision decision;
    FormatsDecision formats;         // number formats per GPU, the features that are on, the dtype
    EnvSettings env;
    ValidationSummary validation;
    std::vector<Finding> findings;   // health signals and driver faults, weighed by the policy
    std::vector<NativePackageReport> native;  // compiled packages judged from their files
    PodReport pod;                   // links between the GPUs, their host links, the container's limits
    HealthLevel verdict = HealthLevel::ok;
    std::string env_file;            // where it was written; empty when not
    std::vector<std::string> appended_arguments;
    std::vector<std::string> notes;  // warnings worth a user's attention
    PhaseClock timings;              // when each phase ended
};

// How a JSON document is laid out: indented over many lines, or on one line
// (JSON Lines: --repeat prints one report a round).  Each ends in a newline.
enum class JsonLayout { pretty, line };

std::string render_json(const Report& report, JsonLayout layout = JsonLayout::pretty);
// The JSON document printed with --json when the run stops before a report
// exists (exits 2 and 3), on one line:
// {"schema":1,"error":{"exit_code":N,"message":"..."}}.
std::string render_json_error(int exit_code, const std::string& message);
std::string render_summary(const Report& report, bool explain);

}  // namespace provision
