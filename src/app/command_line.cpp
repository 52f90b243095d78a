#include "app/command_line.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/output_paths.h"
#include "app/settings.h"
#include "core/error.h"
#include "core/text.h"
#include "kernels/validation_kernels.h"
#include "net/curl_library.h"
#include "net/recipe_cache.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_export.h"
#include "report/report.h"
#include "workload_env/env_file.h"

namespace provision {
namespace {

using Environment = std::map<std::string, std::string>;

constexpr const char* kDescription =
    "Detects the GPUs, selects an attention mechanism from TOML recipes, validates it on the GPU,\n"
    "writes the env settings, then (with -- COMMAND) execs the workload.";

constexpr const char* kExitCodes =
    "Exit status: 0 ok (with COMMAND: the workload's own), 1 internal error (out of memory, a bug),\n"
    "2 usage, 3 bad recipe or fixture,\n"
    "4 no mechanism can serve / override refused, 5 validation failed or a GPU deemed unhealthy,\n"
    "6 env file (or the --json report, --node-labels, --metrics) could not be written, 7 a GPU other\n"
    "processes hold could not be opened, 126/127 COMMAND cannot be executed / not found, 128+N stopped\n"
    "by signal N (SIGTERM: 143) before the handoff, or at any time with --repeat; the signal then\n"
    "removes the --node-labels and --metrics files (only the regular file provision found there or\n"
    "wrote, while it is still that file).\n"
    "Remote recipes are cached and revalidated by ETag; when the server fails the cached copy is\n"
    "used with a warning, and without one the run stops (exit 3).  Header values and credentials\n"
    "in URLs are never printed.\n"
    "Durations (--validate-timeout, --fetch-timeout, --rendezvous-timeout, --proof-timeout, their\n"
    "variables and PROVISION_DETECT_TIMEOUT) are seconds from 0.001 to 3600; --repeat's to 86400.\n";

const std::string* lookup(const Environment& env, const char* name) {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
}

// What this binary carries: the recipes compiled in (a digest a folder of
// recipes can be compared with) and the GPU targets of its kernels.
std::string version_text(const std::string& builtin_recipes) {
    std::string text = fmt::format("provision {} ({})\n", PROVISION_VERSION,
                                   kernels::kernels_available() ? "with CUDA validation kernels"
                                                                : "built without CUDA: validation unavailable");
    text += fmt::format("recipes: {} built in, digest {}", embedded_recipes().size(), embedded_recipes_digest());
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
    const auto files = write_embedded_recipes(folder);
    if (json) {
        std::fputs(render_json_recipes(folder, files).c_str(), stdout);
        return;
    }
    for (const auto& file : files) std::puts(file.c_str());
}

// The arguments CLI11 left: the COMMAND, after an optional '--'.  An option
// provision does not know (before any COMMAND) is a usage error, and so is a
// '--' with nothing after it.
std::vector<std::string> command_from(std::vector<std::string> rest) {
    if (rest.empty()) return rest;
    if (rest.front() == "--") {
        rest.erase(rest.begin());
        if (rest.empty()) throw Error(ExitCode::usage, "'--' must be followed by a COMMAND (see provision --help)");
        return rest;
    }
    if (rest.front().size() > 1 && rest.front().front() == '-')
        throw Error(ExitCode::usage, fmt::format("unknown option {} (see provision --help; a COMMAND starting with '-' "
                                                 "goes after '--')",
                                                 echoed(rest.front())));
    return rest;
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

// --help with the COMMAND in its usage line and without the switches'
// recorded default ("--json{...}").
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App* app, std::string name) const override {
        std::string usage = CLI::Formatter::make_usage(app, std::move(name));
        const auto end = usage.find_last_not_of('\n') + 1;
        return usage.insert(end, " [-- COMMAND [ARG...]]");
    }
    std::string make_option_name(const CLI::Option* option, bool positional) const override {
        std::string name = CLI::Formatter::make_option_name(option, positional);
        if (const auto brace = name.find('{'); brace != std::string::npos)
            name.erase(brace, name.find('}', brace) - brace + 1);
        return name;
    }
};

void add_setting_flags(CLI::App& app, FlagValues& values) {
    app.formatter(std::make_shared<HelpFormatter>());
    for (const Setting& setting : settings()) {
        if (setting.flag.empty()) continue;
        const std::string flag(setting.flag), help = flag_help(setting);
        if (setting.shape == SettingShape::switch_flag) {
            app.add_flag(flag + "{" + kSwitchAlone + "}", help);
            continue;
        }
        // One value per occurrence: a greedy list would swallow the '--' before COMMAND.
        CLI::Option* option = setting.shape == SettingShape::repeatable
                                  ? app.add_option(flag, values.repeated[flag], help)->allow_extra_args(false)
                                  : app.add_option(flag, values.single[flag], help);
        option->option_text(std::string(setting.value_name));
    }
}

// The flags of a command line CLI11 read: each value flag's values (a
// single one's last), each switch's words given with '=' (none alone).
GivenFlags given_flags(const CLI::App& app, const FlagValues& values) {
    GivenFlags given;
    for (const Setting& setting : settings()) {
        const std::string flag(setting.flag);
        if (flag.empty() || app.count(flag) == 0) continue;
        if (const auto it = values.single.find(flag); it != values.single.end()) {
            given[flag] = {it->second};
        } else if (const auto list = values.repeated.find(flag); list != values.repeated.end()) {
            given[flag] = list->second;
        } else {
            std::vector<std::string> words;
            for (const std::string& result : app[flag]->results())
                if (result != kSwitchAlone) words.push_back(result);
            given[flag] = words;
        }
    }
    return given;
}

// The output flags of a command line CLI11 refused part way: what it had
// read of them by then (values are bound only once a line is accepted).
GivenFlags output_flags_read(const CLI::App& app) {
    GivenFlags given;
    for (const Setting& setting : settings())
        if (setting.names_output && app.count(std::string(setting.flag)) > 0)
            given[std::string(setting.flag)] = app[std::string(setting.flag)]->results();
    return given;
}

// The flag when given, else the variable: what a message names.
std::string source_of(const GivenFlags& flags, const char* flag, const char* variable) {
    return flags.count(flag) > 0 ? flag : variable;
}

// A path the flag gives (its last value that is not empty), else its variable's.
std::string path_given(const GivenFlags& flags, const Environment& env, const char* flag, const char* variable) {
    if (const auto it = flags.find(flag); it != flags.end() && !it->second.empty() && !it->second.back().empty())
        return it->second.back();
    const std::string* value = lookup(env, variable);
    return value ? *value : std::string();
}

// The files a run writes must be different regular files (or the discarded
// env file); otherwise a usage error that writes nothing, the labels and
// metrics included.  --check and --repeat write the env file only where asked.
void check_outputs(const GivenFlags& flags, const Environment& env, const Options& options) {
    const bool repeating = flags.count("--repeat") > 0 || lookup(env, "PROVISION_REPEAT");
    const bool env_file_written = options.env_file_given || (flags.count("--check") == 0 && !repeating);
    std::vector<OutputPath> outputs;
    if (env_file_written && options.env_file != kDiscardedEnvFile)
        outputs.push_back({options.env_file, options.env_file_given
                                                 ? source_of(flags, "--env-file", "PROVISION_ENV_FILE")
                                                 : "the default env file"});
    if (!options.publish.node_labels.empty())
        outputs.push_back({options.publish.node_labels, source_of(flags, "--node-labels", "PROVISION_NODE_LABELS")});
    if (!options.publish.metrics.empty())
        outputs.push_back({options.publish.metrics, source_of(flags, "--metrics", "PROVISION_METRICS")});
    check_output_paths(outputs);
}

// Where a refused run says that it failed: the labels and metrics files the
// command line (a flag winning over its variable) gives, so that an earlier
// run's `validated=true` does not outlive it; nowhere where the run's
// outputs could not be written as asked (they would land in the wrong file).
PublishTargets refused_run_targets(const GivenFlags& flags, const Environment& env) {
    Options outputs;
    outputs.env_file = path_given(flags, env, "--env-file", "PROVISION_ENV_FILE");
    outputs.env_file_given = !outputs.env_file.empty();
    if (!outputs.env_file_given) outputs.env_file = Options{}.env_file;
    outputs.publish.node_labels = path_given(flags, env, "--node-labels", "PROVISION_NODE_LABELS");
    outputs.publish.metrics = path_given(flags, env, "--metrics", "PROVISION_METRICS");
    try {
        check_outputs(flags, env, outputs);
    } catch (const Error&) {
        return {};
    }
    return outputs.publish;
}

// What follows from the settings together: their cross-checks and defaults.
void settle_settings(const GivenFlags& flags, const Environment& env, Options& options) {
    if (options.repeat_interval && !options.command.empty())
        throw Error(ExitCode::usage, fmt::format("{} keeps provision running and never starts a COMMAND; run the "
                                                 "workload without it (see provision --help)",
                                                 source_of(flags, "--repeat", "PROVISION_REPEAT")));
    // A run that neither starts a workload nor repeats ends at its report,
    // and its exit closes NVML's descriptors.
    if (options.command.empty() && !options.repeat_interval)
        options.detect.nvml_after_reading = NvmlAfterReading::left_to_exit;
    options.fetch.connect_timeout_ms = std::min(options.fetch.connect_timeout_ms, options.fetch.total_timeout_ms);
    if (options.fetch.cache_dir.empty()) {
        const std::string* xdg = lookup(env, "XDG_CACHE_HOME");
        const std::string* home = lookup(env, "HOME");
        options.fetch.cache_dir = default_cache_dir(xdg ? *xdg : "", home ? *home : "");
    }
    options.report_post.allow_http = options.fetch.allow_http;
    use_curl_library(options.curl_library);
}

// The settings a command line CLI11 accepted gives, with the variables: the
// outputs first (docs/USAGE.md, "The files a run writes"), every value held
// to its rules, then the rest.  Throws Error(usage).
void read_settings(const GivenFlags& flags, const std::vector<std::string>& rest, Options& options) {
    const Environment& env = options.process_environment;
    decode_outputs(flags, env, options);
    check_setting_values(flags, env);
    check_outputs(flags, env, options);
    options.command = command_from(rest);
    decode_settings(flags, env, options);
}

// A flag of the table that takes a value ("--workload NAME"), by its name.
bool takes_value(std::string_view flag) {
    return std::any_of(settings().begin(), settings().end(), [&](const Setting& setting) {
        return setting.flag == flag && setting.shape != SettingShape::switch_flag;
    });
}

}  // namespace

bool wants_json(const std::vector<std::string>& arguments) {
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string_view arg = arguments[i];
        if (arg == "--json") return true;
        if (arg == "--" || arg.size() < 2 || arg.front() != '-') return false;  // the COMMAND's from here
        if (arg.find('=') == std::string_view::npos && takes_value(arg)) ++i;  // "--workload NAME"
    }
    return false;
}

CommandLineOutcome read_command_line(const std::vector<std::string>& arguments, Options& options) {
    options.process_environment = environment_snapshot();
    const Environment& env = options.process_environment;
    CLI::App app{kDescription, "provision"};
    app.footer(std::string(kExitCodes) + environment_help());
    app.set_version_flag("--version", "",
                         "print the version, the built-in recipes' digest and the GPU targets of the kernels, then exit");
    // Everything from the first argument that is not provision's own (or
    // from '--') is the COMMAND: `provision cmd --version` runs cmd --version.
    app.prefix_command();
    FlagValues values;
    add_setting_flags(app, values);
    try {
        std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // as CLI11 takes them
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);
        return CommandLineOutcome::answered;
    } catch (const CLI::CallForVersion&) {
        // Answered whatever else is wrong: only the setting it shows is
        // decoded, and a bad value of it (empty) is not shown.
        try {
            decode_setting("PROVISION_BUILTIN_RECIPES", {}, env, options);
        } catch (const Error&) {
            options.builtin_recipes.clear();
        }
        std::puts(version_text(options.builtin_recipes).c_str());
        return CommandLineOutcome::answered;
    } catch (const CLI::ParseError& error) {
        options.publish = refused_run_targets(output_flags_read(app), env);
        // CLI11's own words name only the flag (no flag's value is checked
        // there); printed through the one path anyway (core/terminal.h).
        throw Error(ExitCode::usage, fmt::format("{} (see provision --help)", error.what()));
    }
    const GivenFlags flags = given_flags(app, values);
    try {
        read_settings(flags, app.remaining(), options);
        if (!options.print_recipes_folder) settle_settings(flags, env, options);
    } catch (const Error&) {
        options.publish = refused_run_targets(flags, env);
        throw;
    }
    if (options.print_recipes_folder) {
        print_recipes(*options.print_recipes_folder, options.json);
        return CommandLineOutcome::answered;
    }
    return CommandLineOutcome::run;
}

}  // namespace provision
