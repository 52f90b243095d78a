// What a run found and decided, rendered for people (stderr) and for
// scripts (JSON on stdout, schema 1 in docs/DESIGN.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/message.h"
#include "core/states.h"
#include "workload_env/env_settings.h"
#include "formats/formats.h"
#include "gpu/inventory.h"
#include "health/action.h"
#include "health/findings.h"
#include "health/torch_findings.h"
#include "fabric/fabric_report.h"
#include "network/job_shape.h"
#include "network/network_report.h"
#include "pod/pod.h"
#include "python/workload_python.h"
#include "report/timings.h"
#include "select/selection.h"
#include "validate/validation.h"

namespace provision {

// A GPU whose checks did not run because other processes hold it: under
// --repeat found so through NVML before any context, in a single run when
// its worker found no room for a context.  Never a failed check.
struct BusyGpu {
    int gpu = 0;
    std::string why;                       // which processes, how much memory
    std::optional<std::int64_t> proved_at;  // --repeat: when its checks last ran (Unix seconds), whose outcomes stand
};

// When a GPU's checks last ran (this run, or under --repeat an earlier round).
struct GpuProof {
    int gpu = 0;
    std::int64_t at = 0;  // Unix seconds
};

struct ValidationSummary {
    ValidationStatus status = ValidationStatus::skipped;
    std::string reason;              // why skipped, or what failed
    std::vector<CheckOutcome> checks;
    double wall_ms = 0;
    std::vector<BusyGpu> busy;
    std::vector<GpuProof> proofs;
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
    std::vector<Action> actions;     // what each finding asks to be done: one a finding, in the same order
    std::vector<NativePackageReport> native;  // compiled packages judged from their files
    std::optional<CudnnInstall> cudnn;        // the cuDNN torch loads, where its files tell
    PodReport pod;                   // links between the GPUs, their host links, the container's limits
    network::JobShape job;           // how many nodes the job spans, from the launcher's variables
    std::optional<network::NetworkReport> network;  // where the network stage ran (several nodes, or labels)
    FabricReport fabric;             // multi-node NVLink (ran: the GPUs are in such a domain)
    HealthLevel verdict = HealthLevel::ok;
    std::string env_file;            // where it was written; empty when not
    std::vector<std::string> appended_arguments;
    std::vector<Message> messages;   // errors, warnings and notes of the stages (with decision.warnings and
                                     // inventory.notes: all_messages)
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
// What --json --print-recipes DIR prints once the files are written, on one
// line: {"schema":1,"recipes":{"folder":"DIR","files":["DIR/...", ...]}}.
std::string render_json_recipes(const std::string& folder, const std::vector<std::string>& files);
std::string render_summary(const Report& report, bool explain);

// Every message of the report, most severe first, each severity in the order
// the stages gave them: the selection's warnings, detection's notes and the
// report's own messages.  The summary and the JSON report list these.
std::vector<Message> all_messages(const Report& report);

}  // namespace provision
