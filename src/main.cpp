// provision: detect the GPUs, choose an attention mechanism, prove it on the
// GPU, write the env settings, and hand off to the workload.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/options.h"
#include "app/output_paths.h"
#include "app/settings.h"
#include "app/pipeline.h"
#include "app/publishing.h"
#include "app/repeat.h"
#include "core/terminal.h"
#include "core/error.h"
#include "core/setting_values.h"
#include "core/states.h"
#include "core/termination.h"
#include "core/text.h"
#include "workload_env/env_file.h"
#include "net/location_list.h"
#include "net/curl_library.h"
#include "net/recipe_cache.h"
#include "net/report_post.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_export.h"
#include "report/report.h"
#include "worker/worker_main.h"
#include "kernels/validation_kernels.h"

namespace {

using provision::ExitCode;

// What this binary carries: the recipes compiled in (a digest a folder of
// recipes can be compared with) and the GPU targets of its kernels.
std::string version_text(const std::string& builtin_recipes) {
    namespace kernels = provision::kernels;
    std::string text = fmt::format("provision {} ({})\n", PROVISION_VERSION,
                                   kernels::kernels_available() ? "with CUDA validation kernels"
                                                                : "built without CUDA: validation unavailable");
    text += fmt::format("recipes: {} built in, digest {}", provision::embedded_recipes().size(),
                        provision::embedded_recipes_digest());
    if (!builtin_recipes.empty())
        text += fmt::format(" (replaced here by PROVISION_BUILTIN_RECIPES={})", builtin_recipes);
    text += fmt::format("\nkernels: {}",
                        kernels::kernels_available() ? kernels::kernel_architectures() : "none (built without CUDA)");
    return text;
}

// --print-recipes DIR: the built-in recipes as files, one written path a
// line, or with --json one document naming them (a failure then gets the
// JSON error document, from main).
void print_recipes(const std::string& folder, bool json) {
    const auto files = provision::write_embedded_recipes(folder);
    if (json) {
        std::fputs(provision::render_json_recipes(folder, files).c_str(), stdout);
        return;
    }
    for (const auto& file : files) std::puts(file.c_str());
}

constexpr const char* kExitCodes =
    "Exit status: 0 ok (with COMMAND: the workload's own), 1 internal error (out of memory, a bug),\n"
    "2 usage, 3 bad recipe or fixture,\n"
    "4 no mechanism can serve / override refused, 5 validation failed or a GPU deemed unhealthy,\n"
    "6 env file (or the --json report, --node-labels, --metrics) could not be written, 126/127\n"
    "COMMAND cannot be executed / not found, 128+N stopped by signal N (SIGTERM: 143) before the\n"
    "handoff, or at any time with --repeat; the signal then removes the --node-labels and --metrics\n"
    "files (only the regular file provision found there or wrote, while it is still that file).\n"
    "Remote recipes are cached and revalidated by ETag; when the server fails the cached copy is\n"
    "used with a warning, and without one the run stops (exit 3).  Header values and credentials\n"
    "in URLs are never printed.\n";

// The arguments CLI11 left: the COMMAND, after an optional '--'.  An option
// provision does not know (before any COMMAND) is a usage error, and so is a
// '--' with nothing after it.
std::vector<std::string> command_from(std::vector<std::string> rest) {
    if (rest.empty()) return rest;
    if (rest.front() == "--") {
        rest.erase(rest.begin());
        if (rest.empty())
            throw provision::Error(ExitCode::usage, "'--' must be followed by a COMMAND (see provision --help)");
        return rest;
    }
    if (rest.front().size() > 1 && rest.front().front() == '-')
        throw provision::Error(ExitCode::usage,
                               fmt::format("unknown option {} (see provision --help; a COMMAND starting with '-' "
                                           "goes after '--')",
                                           provision::echoed(rest.front())));
    return rest;
}

const std::string* lookup(const std::map<std::string, std::string>& env, const char* name) {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
}

// Every setting's flag, from the one table.  A value flag keeps the last of
// its values; a repeatable one keeps each.
struct FlagValues {
    std::map<std::string, std::string> single;
    std::map<std::string, std::vector<std::string>> repeated;
};

// What CLI11 records for a switch given alone: a NUL, which no argument can
// hold, so that "--json=false" (recorded as "false") is told apart from
// "--json" and refused by the settings (app/settings.h, SettingShape).
const std::string kSwitchAlone(1, '\0');

// --help without the switches' recorded default ("--json{...}").
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_option_name(const CLI::Option* option, bool positional) const override {
        std::string name = CLI::Formatter::make_option_name(option, positional);
        if (const auto brace = name.find('{'); brace != std::string::npos)
            name.erase(brace, name.find('}', brace) - brace + 1);
        return name;
    }
};

void add_setting_flags(CLI::App& app, FlagValues& values) {
    app.formatter(std::make_shared<HelpFormatter>());
    for (const provision::Setting& setting : provision::settings()) {
        if (setting.flag.empty()) continue;
        const std::string flag(setting.flag), help = provision::flag_help(setting);
        if (setting.shape == provision::SettingShape::switch_flag) {
            app.add_flag(flag + "{" + kSwitchAlone + "}", help);
            continue;
        }
        // One value per occurrence: a greedy list would swallow the '--' before COMMAND.
        CLI::Option* option = setting.shape == provision::SettingShape::repeatable
                                  ? app.add_option(flag, values.repeated[flag], help)->allow_extra_args(false)
                                  : app.add_option(flag, values.single[flag], help);
        option->option_text(std::string(setting.value_name));
    }
}

provision::GivenFlags given_flags(const CLI::App& app, const FlagValues& values) {
    provision::GivenFlags given;
    for (const provision::Setting& setting : provision::settings()) {
        const std::string flag(setting.flag);
        if (flag.empty() || app.count(flag) == 0) continue;
        if (const auto it = values.single.find(flag); it != values.single.end()) {
            given[flag] = {it->second};
        } else if (const auto list = values.repeated.find(flag); list != values.repeated.end()) {
            given[flag] = list->second;
        } else {
            // A switch: the values given with '=', none when it stood alone.
            std::vector<std::string> words;
            for (const std::string& result : app[flag]->results())
                if (result != kSwitchAlone) words.push_back(result);
            given[flag] = words;
        }
    }
    return given;
}

// The flag when given, else the variable: what a message names.
std::string source_of(const provision::GivenFlags& flags, const char* flag, const char* variable) {
    return flags.count(flag) > 0 ? flag : variable;
}

// Outputs that cannot be written as asked: nothing is published to them
// either (the labels and metrics of the refused run would land in the wrong
// file), and the usage error is thrown.
void check_outputs_or_publish_none(const std::vector<provision::OutputPath>& outputs, provision::Options& options) {
    try {
        provision::check_output_paths(outputs);
    } catch (const provision::Error&) {
        options.publish.node_labels.clear();
        options.publish.metrics.clear();
        throw;
    }
}

// The files a run writes must be different regular files (or the discarded
// env file); otherwise a usage error that writes nothing, the labels and
// metrics included.  --check and --repeat write the env file only where asked.
void check_outputs(const provision::GivenFlags& flags, const std::map<std::string, std::string>& env,
                   provision::Options& options) {
    const bool repeating = flags.count("--repeat") > 0 || lookup(env, "PROVISION_REPEAT");
    const bool env_file_written = options.env_file_given || (flags.count("--check") == 0 && !repeating);
    std::vector<provision::OutputPath> outputs;
    if (env_file_written && options.env_file != provision::kDiscardedEnvFile)
        outputs.push_back({options.env_file, options.env_file_given
                                                 ? source_of(flags, "--env-file", "PROVISION_ENV_FILE")
                                                 : "the default env file"});
    if (!options.publish.node_labels.empty())
        outputs.push_back({options.publish.node_labels, source_of(flags, "--node-labels", "PROVISION_NODE_LABELS")});
    if (!options.publish.metrics.empty())
        outputs.push_back({options.publish.metrics, source_of(flags, "--metrics", "PROVISION_METRICS")});
    check_outputs_or_publish_none(outputs, options);
}

// A command line CLI11 refused still replaces what an earlier run published,
// at the paths it gave, unless they could not be written as asked.
void keep_outputs_of_refused_line(const CLI::App& app, const std::map<std::string, std::string>& env,
                                  provision::Options& options) {
    if (app.count("--env-file") == 0 && lookup(env, "PROVISION_ENV_FILE"))
        options.env_file = *lookup(env, "PROVISION_ENV_FILE");
    std::vector<provision::OutputPath> outputs;
    for (const auto& [flag, target] : {std::pair{"--env-file", &options.env_file},
                                       std::pair{"--node-labels", &options.publish.node_labels},
                                       std::pair{"--metrics", &options.publish.metrics}}) {
        if (app.count(flag) > 0 && !app[flag]->results().empty()) *target = app[flag]->results().back();
        if (!target->empty() && *target != provision::kDiscardedEnvFile) outputs.push_back({*target, flag});
    }
    try {
        check_outputs_or_publish_none(outputs, options);
    } catch (const provision::Error&) {
        // The refused command line is the error to report.
    }
}

// What follows from the settings together: their cross-checks and defaults.
void settle_settings(const provision::GivenFlags& flags, const std::map<std::string, std::string>& env,
                     provision::Options& options) {
    if (options.repeat_interval && !options.command.empty())
        throw provision::Error(ExitCode::usage,
                               fmt::format("{} keeps provision running and never starts a COMMAND; run the workload "
                                           "without it (see provision --help)",
                                           source_of(flags, "--repeat", "PROVISION_REPEAT")));
    // A run that neither starts a workload nor repeats ends at its report,
    // and its exit closes NVML's descriptors.
    if (options.command.empty() && !options.repeat_interval)
        options.detect.nvml_after_reading = provision::NvmlAfterReading::left_to_exit;
    options.fetch.connect_timeout_ms = std::min(options.fetch.connect_timeout_ms, options.fetch.total_timeout_ms);
    if (options.fetch.cache_dir.empty()) {
        const std::string* xdg = lookup(env, "XDG_CACHE_HOME");
        const std::string* home = lookup(env, "HOME");
        options.fetch.cache_dir = provision::default_cache_dir(xdg ? *xdg : "", home ? *home : "");
    }
    options.report_post.allow_http = options.fetch.allow_http;
    provision::use_curl_library(options.curl_library);
}

// Parses the command line and the settings' variables into Options; throws
// Error(usage) on bad input.  Returns false when --help, --version or
// --print-recipes was answered.
bool parse(int argc, char** argv, provision::Options& options) {
    options.process_environment = provision::environment_snapshot();
    const auto& env = options.process_environment;
    CLI::App app{"Detects the GPUs, selects an attention mechanism from TOML recipes, validates it on the GPU,\n"
                 "writes the env settings, then (with -- COMMAND) execs the workload.",
                 "provision"};
    app.footer(std::string(kExitCodes) + provision::environment_help());
    app.set_version_flag("--version", "",
                         "print the version, the built-in recipes' digest and the GPU targets of the kernels, then exit");
    // Everything from the first argument that is not provision's own (or
    // from '--') is the COMMAND: `provision cmd --version` runs cmd --version.
    app.prefix_command();
    FlagValues values;
    add_setting_flags(app, values);
    // Known before parsing, so that even a command line CLI11 refuses
    // replaces what an earlier run published (the flags, when given, win).
    for (const auto& [variable, target] : {std::pair{"PROVISION_NODE_LABELS", &options.publish.node_labels},
                                           std::pair{"PROVISION_METRICS", &options.publish.metrics}})
        if (const std::string* path = lookup(env, variable)) *target = *path;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);
        return false;
    } catch (const CLI::CallForVersion&) {
        // Answered whatever else is wrong: only the setting it shows is
        // decoded, and a bad value of it (empty) is not shown.
        try {
            provision::decode_setting("PROVISION_BUILTIN_RECIPES", {}, env, options);
        } catch (const provision::Error&) {
            options.builtin_recipes.clear();
        }
        std::puts(version_text(options.builtin_recipes).c_str());
        return false;
    } catch (const CLI::ParseError& error) {
        keep_outputs_of_refused_line(app, env, options);
        // CLI11's own words name only the flag (no flag's value is checked
        // there); printed through the one path anyway (core/terminal.h).
        throw provision::Error(ExitCode::usage, fmt::format("{} (see provision --help)", error.what()));
    }
    const provision::GivenFlags flags = given_flags(app, values);
    provision::decode_outputs(flags, env, options);
    try {
        provision::check_setting_values(flags, env);
    } catch (const provision::Error&) {
        // A refused value is the error to report; the outputs are still held
        // to their rules, so that none that could not be written is published.
        try {
            check_outputs(flags, env, options);
        } catch (const provision::Error&) {
        }
        throw;
    }
    check_outputs(flags, env, options);
    options.command = command_from(app.remaining());
    provision::decode_settings(flags, env, options);
    if (options.print_recipes_folder) {
        print_recipes(*options.print_recipes_folder, options.json);
        return false;
    }
    settle_settings(flags, env, options);
    return true;
}

// Whether --json stands among provision's own arguments (before any '--').
bool wants_json(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") return false;
        if (arg == "--json") return true;
    }
    return false;
}

void print_json_error(int exit_code, const std::string& message) {
    std::fputs(provision::render_json_error(exit_code, message).c_str(), stdout);
    std::fflush(stdout);
}

// An error no stage expected (std::bad_alloc, a bug): the same one place
// reports it, on stderr and with --json as the JSON error document, and the
// exit status is 1; the labels and metrics say the run failed.  The memory
// the failed work held is freed by now.
int internal_error(bool json, const char* what, const provision::Options& options) {
    const std::string message = fmt::format("internal error: {}", what);
    provision::print_message("", message);
    try {
        if (json) print_json_error(static_cast<int>(ExitCode::internal_error), message);
        provision::publish_stopped_run(options, provision::Error(ExitCode::internal_error, message));
    } catch (...) {
        // Not even that fits: stderr has said it.
    }
    return static_cast<int>(ExitCode::internal_error);
}

}  // namespace

int main(int argc, char** argv) {
    // The validation child: runs one GPU's checks, nothing else.
    if (argc > 1 && std::string(argv[1]) == "__check-worker") {
        const int status = provision::check_worker_main(std::vector<std::string>(argv + 2, argv + argc));
        // The results are out; skip the CUDA runtime's teardown at exit
        // (destroying the context costs about 100 ms on an H100, and the
        // parent waits for it).  The driver frees everything with the process.
        std::cout.flush();
        std::fflush(nullptr);
        std::_Exit(status);
    }
    provision::install_termination_handlers();
    bool json = false;
    provision::Options options;
    try {
        // --json decides the error's form even when parsing fails later.
        json = wants_json(argc, argv);
        if (!parse(argc, argv, options)) return 0;
        provision::remove_published_files_at_termination(options);
        if (options.repeat_interval) provision::run_repeatedly(options);
        return provision::carry_out(provision::plan_run(options), options);
    } catch (const provision::Error& error) {
        provision::print_message("error", error.what());
        // Exits 2 and 3 come before any report; later failures (exec) follow one.
        // --print-recipes makes no report: any failure of its own is the document.
        const bool before_report = error.code() == ExitCode::usage || error.code() == ExitCode::invalid_input;
        if (json && (before_report || options.print_recipes_folder))
            print_json_error(static_cast<int>(error.code()), error.what());
        if (before_report) provision::publish_stopped_run(options, error);
        return static_cast<int>(error.code());
    } catch (const std::exception& error) {
        return internal_error(json, error.what(), options);
    } catch (...) {
        return internal_error(json, "an unknown exception", options);
    }
}
