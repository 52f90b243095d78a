#include "app/pipeline.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <future>
#include <thread>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app/compiled_code.h"
#include "app/finding_actions.h"
#include "app/network_step.h"
#include "app/publishing.h"
#include "app/validation_step.h"
#include "app/workload_nccl.h"
#include "app/run_outcome.h"
#include "app/stage_settings.h"
#include "core/terminal.h"
#include "fabric/fabric_judgement.h"
#include "fabric/fabric_plan.h"
#include "fabric/imex_channels.h"
#include "nccl/mnnvl_settings.h"
#include "core/suggest.h"
#include "core/text.h"
#include "workload_env/env_file.h"
#include "workload_env/user_values.h"
#include "formats/formats.h"
#include "gpu/xid_events.h"
#include "gpu/detect.h"
#include "gpu/nvml_probe.h"
#include "handoff/handoff.h"
#include "health/findings.h"
#include "net/recipe_locations.h"
#include "net/report_post.h"
#include "packages/python_packages.h"
#include "pod/pod.h"
#include "python/python_mismatch.h"
#include "python/workload_python.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_loader.h"
#include "recipe/sensitive_variables.h"
#include "select/classify.h"
#include "validate/throughput_health.h"

namespace provision {
namespace {

const WorkloadSpec& find_workload(const RecipeSet& recipes, const std::string& name) {
    const auto it = recipes.workloads.find(name);
    if (it != recipes.workloads.end()) return it->second;
    std::vector<std::string> known;
    for (const auto& [workload, spec] : recipes.workloads) known.push_back(workload);
    std::string message = fmt::format("unknown workload '{}'", echoed(name));
    const std::string hint = closest_match(name, known);
    if (!hint.empty()) message += fmt::format("; did you mean '{}'?", hint);
    message += fmt::format(" (known: {})", fmt::join(known, ", "));
    throw Error(ExitCode::usage, message);
}

Inventory detect(const DetectionSettings& settings) {
    if (!settings.gpu_fixture.empty())
        return load_gpu_fixture(settings.gpu_fixture, settings.detect.cuda_visible_devices);
    return detect_gpus(settings.detect);
}

// Detection on a thread of its own from the start: NVML's tens of
// milliseconds go by while the recipes, the Python and torch's files are
// read.  Detached, like detection's own probes, so that a run ending early
// (a bad recipe) never waits for a slow driver: the thread owns its copy
// of the settings.
std::future<Inventory> start_detection(DetectionSettings settings) {
    std::promise<Inventory> promise;
    auto future = promise.get_future();
    std::thread([promise = std::move(promise), settings = std::move(settings)]() mutable {
        try {
            promise.set_value(detect(settings));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
    }).detach();
    return future;
}

std::string env_file_header(const Report& report) {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string header = fmt::format(
        "Written by provision {} at {}.\nWorkload {}; attention mechanism {} ({}).\n"
        "Load it with: . <this file>\n",
        PROVISION_VERSION, stamp, report.workload, report.decision.mechanism, to_string(report.decision.source));
    for (const auto& gpu : report.inventory.gpus)
        header += fmt::format("GPU {}: {} ({})\n", gpu.index, gpu.name, gpu.architecture);
    return header;
}

// After the report is final and before the handoff; a failed post only
// warns, within the post's own time budget.
void send_report(const ReportPost& post, const std::string& json) {
    if (post.url.empty()) return;
    for (const auto& warning : post_report(post, json)) print_message("warning", warning);
}

// The packages the workload's mechanisms need, each with those mechanisms.
PackageNeeds needed_packages(const RecipeSet& recipes, const WorkloadSpec& workload) {
    PackageNeeds needed;
    for (const auto& mechanism : accepted_mechanisms(workload)) {
        if (!recipes.mechanisms.count(mechanism)) continue;
        const MechanismSpec spec = recipes.mechanism_for(workload, mechanism);
        add_package_needs(needed, spec.packages, mechanism);
        for (const auto& [architecture, more] : spec.packages_for) add_package_needs(needed, more, mechanism);
    }
    return needed;
}

// A package built for another Python than the workload's cannot be
// imported: the mechanisms needing it are refused, and a finding says why.
void reject_other_python_builds(const WorkloadPython& python, const RecipeSet& recipes, const WorkloadSpec& workload,
                                PackageIndex& packages, std::vector<Finding>& findings) {
    if (!python.version) return;
    const auto needed = needed_packages(recipes, workload);
    std::vector<std::string> names;
    for (const auto& [name, mechanisms] : needed) names.push_back(name);
    for (const auto& mismatch : find_python_mismatches(packages, names, *python.version)) {
        packages.mark_unusable(mismatch.package.name, mismatch.describe());
        const auto& mechanisms = needed.at(normalize_package_name(mismatch.package.name));
        findings.push_back(
            {-1, -1, "python_mismatch", recipes.policy.level("python_mismatch"),
             fmt::format("{} {} ({}) is built for {} ({}), but the workload's Python is {}{}: it cannot be imported, "
                         "so {} {} rejected; install a build for Python {}",
                         mismatch.package.name, mismatch.package.version, mismatch.package.location,
                         mismatch.build.describe(), mismatch.build.evidence, python.version->str(),
                         python.executable.empty() ? "" : fmt::format(" ({})", python.executable),
                         fmt::join(mechanisms, ", "), mechanisms.size() == 1 ? "is" : "are",
                         python.version->str())});
    }
}

// A recipe's loader, start-up or device-selection variable (allowed by its
// allow_sensitive) is written with a warning.  CUDA_VISIBLE_DEVICES from a
// recipe must not change which GPUs the workload sees: the decision was
// made for those that CUDA_VISIBLE_DEVICES in the environment leaves visible.
void check_sensitive_settings(const EnvSettings& env, const std::map<std::string, std::string>& environment,
                              std::vector<Message>& messages) {
    for (const auto& [name, value] : env.entries()) {
        if (!is_sensitive_variable(name) || env.is_kept(name)) continue;
        const auto it = environment.find(name);
        if (it != environment.end() && it->second == value) continue;  // nothing changes
        if (name == "CUDA_VISIBLE_DEVICES")
            throw Error(ExitCode::invalid_input,
                        fmt::format("a recipe sets CUDA_VISIBLE_DEVICES={}, but the GPUs were detected and the "
                                    "mechanism chosen with CUDA_VISIBLE_DEVICES {}: the workload would run on "
                                    "other GPUs than those the decision was made for",
                                    echoed(value),
                                    it == environment.end() ? std::string("unset")
                                                            : fmt::format("={}", echoed(it->second))));
        messages.push_back(Message::warning(fmt::format("a recipe sets {}={} (a loader, start-up or device-selection "
                                                        "variable, allowed by its allow_sensitive)",
                                                        name, printable(value, 256))));
    }
}

// The installed packages the workload's Python sees, and what a user should
// read about them: a folder that cannot be read may hide a package the
// workload imports (a warning); the rest are notes.
PackageIndex read_packages(const std::vector<std::string>& site_packages, std::vector<Message>& messages) {
    PackageIndex packages = scan_site_packages(site_packages);
    for (const auto& [dir, why] : packages.unreadable_dirs)
        messages.push_back(Message::warning(fmt::format("site-packages folder {} cannot be read: {}", dir, why)));
    for (const InstalledPackage* later : packages.shadowed()) {
        const InstalledPackage* used = packages.find(later->name);
        messages.push_back(Message::note(fmt::format("{} is installed more than once: {} at {} counts, {} at {} does "
                                                     "not",
                                                     used->name, used->version, used->location, later->version,
                                                     later->location)));
    }
    if (packages.packages().empty())
        messages.push_back(Message::note(fmt::format(
            "no Python packages found in: {}", site_packages.empty() ? std::string("(no site-packages folder exists)")
                                                                     : fmt::format("{}", fmt::join(site_packages, ", ")))));
    return packages;
}

// The remote recipes' warnings (a cached copy used where the server failed)
// go to `messages`.
RecipeSet load_recipes(const std::vector<std::string>& locations, const FetchOptions& fetch,
                       const std::string& builtin_recipes, std::vector<Message>& messages) {
    const LocalRecipes user_recipes = localize_recipes(locations, fetch);
    add_messages(messages, Severity::warning, user_recipes.warnings);
    const std::optional<std::string> builtin_folder = builtin_recipe_folder(builtin_recipes);
    try {
        return load_recipes_over_builtins(builtin_folder, user_recipes.paths);
    } catch (const Error& error) {
        throw Error(error.code(), user_recipes.with_origins(error.what()));
    }
}

// Torch's and the candidate extensions' compiled code against the GPUs and
// the driver, and forward-compatibility libraries on the library path
// (the workload's LD_LIBRARY_PATH).
void judge_native_code(const std::string& library_path, const RecipeSet& recipes, const WorkloadSpec& workload,
                       const std::optional<TorchFiles>& torch, const std::optional<Override>& override_request,
                       PackageIndex& packages, Report& report) {
    if (auto cudnn = find_torch_cudnn(torch, packages, library_path, "/etc/ld.so.conf.d")) {
        packages.set_cudnn(*cudnn);
        report.cudnn = std::move(cudnn);
    }
    CompiledCode compiled = judge_compiled_code(
        recipes, workload, report.inventory, torch,
        override_request ? std::optional<std::string>(override_request->mechanism) : std::nullopt, packages);
    report.native = std::move(compiled.packages);
    report.findings.insert(report.findings.end(), compiled.findings.begin(), compiled.findings.end());
    CompatJudgement compat =
        judge_compat_libraries(library_path, "/etc/ld.so.conf.d", report.inventory, recipes.policy);
    report.findings.insert(report.findings.end(), compat.findings.begin(), compat.findings.end());
    add_messages(report.messages, Severity::note, compat.notes);
}

// The env settings, and what the outcome rule needs to know of the decision.
RunFacts settle(const Options& options, const RecipeSet& recipes, const WorkloadSpec& workload, const Decision& first,
                Report& report) {
    const Decision& decision = report.decision;
    RunFacts facts;
    facts.mechanism_chosen = !decision.mechanism.empty();
    facts.chosen_before_checks = !first.mechanism.empty();
    facts.outcome = decision.outcome;
    facts.source = decision.source;
    facts.validation = report.validation.status;
    facts.check_mode = options.check;
    facts.worst_finding = worst_level(report.findings);
    facts.dtype_override = report.formats.dtype.user;
    facts.gpu_busy = !report.validation.busy.empty() && !options.repeat_interval;
    facts.busy_policy = options.busy_gpu;
    report.messages.insert(report.messages.end(), report.formats.messages.begin(), report.formats.messages.end());
    if (!facts.mechanism_chosen) return facts;
    report.env = build_env_settings(report.inventory, recipes, workload, decision, report.formats,
                                    UserValues(options.process_environment));
    add_pod_settings(report.pod, report.env);
    add_fabric_settings(report.fabric, report.env);
    if (report.network) network::add_network_settings(*report.network, report.env);
    for (const auto& kept : report.env.kept()) report.messages.push_back(Message::note(describe(kept)));
    check_sensitive_settings(report.env, options.process_environment, report.messages);
    report.appended_arguments =
        workload_arguments(workload, decision.mechanism, report.formats.dtype.value, options.command);
    // --validate=full: a GPU well below its model's throughput serves, degraded.
    for (auto& figure : compare_throughput(report.inventory.gpus, report.validation.checks, recipes.throughput)) {
        facts.below_expected_throughput = facts.below_expected_throughput || figure.degraded;
        if (figure.degraded) report.messages.push_back(Message::warning(std::move(figure.words)));
        else if (figure.expected == 0) report.messages.push_back(Message::note(std::move(figure.words)));
    }
    return facts;
}

// The paths the workload's NCCL takes with the variables it will get and
// this driver.
NcclPaths nccl_paths_for(const std::optional<NcclLibrary>& nccl, const Inventory& inventory,
                         const std::map<std::string, std::string>& environment) {
    const auto variable = [&](const char* name) -> std::optional<std::string> {
        const auto it = environment.find(name);
        return it == environment.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    return nccl_paths(nccl, variable("NCCL_CUMEM_ENABLE"), variable("NCCL_CUMEM_HOST_ENABLE"),
                      cuda_number(inventory.driver.cuda));
}

// Multi-node NVLink, before the checks: the cliques and whether NCCL would
// check fabric handles (fabric/fabric_plan.h); IMEX's channels are read only
// where the fabric is such a domain, so elsewhere nothing is added.
FabricReport plan_fabric_stage(const std::map<std::string, std::string>& environment, const SystemFolders& folders,
                               const Inventory& inventory, NcclFacts& nccl, int job_nodes) {
    const auto variable = [&](const char* name) -> std::optional<std::string> {
        const auto it = environment.find(name);
        return it == environment.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    FabricReport fabric = plan_fabric(
        inventory, nccl.paths, nccl.library.has_value(),
        mnnvl_settings(variable("NCCL_MNNVL_ENABLE"), variable("NCCL_MNNVL_UUID"), variable("NCCL_MNNVL_CLIQUE_ID")),
        job_nodes);
    if (fabric.ran)
        fabric.imex = read_imex_channels(folders.proc, folders.devices);
    nccl.fabric_handle_check = fabric.nccl_checks;
    return fabric;
}

}  // namespace

Plan plan_run(const Options& options, RoundMemory memory) {
    PhaseClock clock;
    const SystemFolders folders = system_folders(options);
    // every expected GPU's worker opens it from now on
    ValidationStep validation(validation_settings(options), memory.proofs);
    std::future<Inventory> detection = start_detection(detection_settings(options));
    NetworkStep network(options);  // on several nodes (or for labels) the network is read from now on
    Plan plan;
    Report& report = plan.report;
    plan.recipes = load_recipes(options.recipes, options.fetch, options.builtin_recipes, report.messages);
    const RecipeSet& recipes = plan.recipes;
    const WorkloadSpec& workload = find_workload(recipes, options.workload);
    report.workload = workload.name;
    clock.mark(Phase::recipes);

    report.python = find_workload_python({options.python, options.python_option_name, options.site_packages,
                                          recipes.site_packages, options.command, options.process_environment});
    add_messages(report.messages, Severity::note, report.python.notes);
    PackageIndex packages = read_packages(report.python.site_packages, report.messages);
    reject_other_python_builds(report.python, recipes, workload, packages, report.findings);
    const std::optional<TorchFiles> torch = read_torch_files(report.python.site_packages);
    NcclFacts nccl{
        find_workload_nccl(options.library_path, options.test.system_libraries, report.python.site_packages, packages),
        {}};
    clock.mark(Phase::python);

    report.inventory = detection.get();
    if (memory.xids) memory.xids->add_events_to(report.inventory);
    classify_gpus(report.inventory, recipes);
    const auto health = evaluate_health(report.inventory, recipes.policy);
    report.findings.insert(report.findings.begin(), health.begin(), health.end());
    validation.follow(report.inventory);
    nccl.paths = nccl_paths_for(nccl.library, report.inventory, options.process_environment);
    clock.mark(Phase::detection);
    network.finish(report, recipes.policy, clock);
    report.fabric =
        plan_fabric_stage(options.process_environment, folders, report.inventory, nccl, report.job.nodes);
    if (report.fabric.ran) clock.mark(Phase::fabric);

    const auto override_request = read_override(options.overrides, options.process_environment, workload, recipes);
    judge_native_code(options.library_path, recipes, workload, torch, override_request, packages, report);
    clock.mark(Phase::compiled_code);

    const Decision first = select_mechanism(report.inventory, recipes, workload, packages, override_request, {});
    clock.mark(Phase::selection);
    const CopyChecks copies =
        validation.run(report.inventory, recipes, first, nccl, network.meeting(options, report), report.validation,
                       clock);
    network.judge_meeting(report, recipes.policy);
    const CheckVerdicts verdicts = verdicts_of(report.validation);
    report.decision = select_mechanism(report.inventory, recipes, workload, packages, override_request, verdicts);
    report.formats = decide_formats(report.inventory, recipes, workload, report.decision.mechanism, packages,
                                    verdicts, options.overrides);
    report.pod = assess_pod(report.inventory, recipes, workload, copies, nccl, UserValues(options.process_environment),
                            folders.sysfs);
    report.findings.insert(report.findings.end(), report.pod.findings.begin(), report.pod.findings.end());
    judge_fabric(report.fabric, report.inventory, nccl.library, copies.fabric_handles, recipes.pod, recipes.policy,
                 UserValues(options.process_environment), options.apply_workarounds);
    report.findings.insert(report.findings.end(), report.fabric.findings.begin(), report.fabric.findings.end());
    report.actions = finding_actions(report, recipes);  // every finding is in

    const RunOutcome outcome = decide_run_outcome(settle(options, recipes, workload, first, report));
    report.verdict = outcome.verdict;
    plan.exit_code = outcome.exit_code;
    report.timings = clock;
    return plan;
}

int carry_out(Plan plan, const Options& options) {
    Report& report = plan.report;
    PhaseClock& clock = report.timings;
    // --check and --repeat write the env file only where asked to.
    const bool write_env = !report.decision.mechanism.empty() && report.verdict != HealthLevel::failed &&
                           ((!options.check && !options.repeat_interval) || options.env_file_given);
    if (write_env && options.env_file == kDiscardedEnvFile) {
        report.messages.push_back(Message::note(fmt::format("env file {}: the settings are discarded", kDiscardedEnvFile)));
    } else if (write_env) {
        try {
            write_env_file_atomically(options.env_file, render_env_file(report.env, env_file_header(report)),
                                      /*create_folders=*/true);
            report.env_file = options.env_file;
            clock.mark(Phase::env_file);
        } catch (const Error& error) {
            // With a workload to start, the settings still reach it through
            // its environment; a missing file must not keep the pod down.
            if (options.command.empty()) {
                report.verdict = HealthLevel::failed;
                plan.exit_code = error.code();
            }
            // Without a workload it is why the run fails (exit 6).
            report.messages.push_back({options.command.empty() ? Severity::error : Severity::warning, error.what()});
        }
    }
    clock.mark(Phase::total);
    const PublishSettings publishing = publish_settings(options);
    publish_finished_run(plan, publishing);
    std::fputs(terminal_lines(render_summary(report, options.explain)).c_str(), stderr);
    const std::string json = render_json(report);
    // Under --repeat one report a round, each on a line of its own (JSON Lines).
    if (options.json)
        std::fputs(options.repeat_interval ? render_json(report, JsonLayout::line).c_str() : json.c_str(), stdout);
    // A report that did not reach stdout (a full disk, a closed pipe or one
    // whose reader has gone) is a failed run without a workload: a caller
    // reading it must not see 0, nor must the metrics.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const std::string why = fmt::format("cannot write the JSON report to stdout: {}", std::strerror(errno));
        print_message(options.command.empty() ? "error" : "warning", why);
        if (options.command.empty() && plan.exit_code == ExitCode::ok)
            publish_exit_code(plan, publishing, ExitCode::io_failure);
    }
    std::fflush(stderr);
    send_report(options.report_post, json);
    wait_for_nvml_shutdown(std::chrono::seconds(1));  // NVML's descriptors closed before the exit or the exec
    if (plan.exit_code != ExitCode::ok || options.command.empty()) return static_cast<int>(plan.exit_code);

    std::vector<std::string> command = options.command;
    command.insert(command.end(), report.appended_arguments.begin(), report.appended_arguments.end());
    try {
        exec_workload(command, report.env, options.search_path);
    } catch (const Error& error) {
        publish_exit_code(plan, publishing, error.code());  // 126 or 127: what the process exits with
        throw;
    }
}

}  // namespace provision
