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
#include "app/environment_variables.h"
#include "app/pipeline.h"
#include "app/publishing.h"
#include "app/repeat.h"
#include "core/error.h"
#include "core/setting_values.h"
#include "core/states.h"
#include "core/termination.h"
#include "core/text.h"
#include "workload_env/env_file.h"
#include "net/location_list.h"
#include "net/recipe_cache.h"
#include "net/report_post.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_export.h"
#include "report/report.h"
#include "validate/validation.h"
#include "validation_kernels.h"

namespace {

using provision::ExitCode;

std::vector<std::string> split_colons(const std::string& text) {
    std::vector<std::string> parts;
    std::string part;
    for (const char c : text + ":") {
        if (c != ':') {
            part += c;
        } else if (!part.empty()) {
            parts.push_back(part);
            part.clear();
        }
    }
    return parts;
}

// What this binary carries: the recipes compiled in (a digest a folder of
// recipes can be compared with) and the GPU targets of its kernels.
std::string version_text(const std::map<std::string, std::string>& env) {
    namespace kernels = provision::kernels;
    std::string text = fmt::format("provision {} ({})\n", PROVISION_VERSION,
                                   kernels::kernels_available() ? "with CUDA validation kernels"
                                                                : "built without CUDA: validation unavailable");
    text += fmt::format("recipes: {} built in, digest {}", provision::embedded_recipes().size(),
                        provision::embedded_recipes_digest());
    const auto replaced = env.find("PROVISION_BUILTIN_RECIPES");
    if (replaced != env.end() && !replaced->second.empty())
        text += fmt::format(" (replaced here by PROVISION_BUILTIN_RECIPES={})", replaced->second);
    text += fmt::format("\nkernels: {}",
                        kernels::kernels_available() ? kernels::kernel_architectures() : "none (built without CUDA)");
    return text;
}

// --print-recipes DIR: the built-in recipes as files, one written path a line.
void print_recipes(const std::string& folder) {
    if (folder.empty()) throw provision::Error(ExitCode::usage, "--print-recipes needs a folder (see provision --help)");
    for (const auto& file : provision::write_embedded_recipes(folder)) std::puts(file.c_str());
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
                                           provision::printable(rest.front(), 64)));
    return rest;
}

// A setting's value from a flag (when the command line has it) or else from
// its environment variable; `source` names which, for messages.
struct Setting {
    std::string value;
    std::string source;
};

// The env file, --node-labels and --metrics (or their variables): a file
// each; an empty value is a usage error.  Outputs that cannot name a file,
// or two that are one file, are a usage error that writes nothing: the
// labels and metrics are not published either.
void read_outputs(const std::optional<Setting>& labels, const std::optional<Setting>& metrics,
                  const std::optional<Setting>& env_file, bool env_file_written, provision::Options& options) {
    for (const auto& [given, target] :
         {std::pair{&labels, &options.publish.node_labels}, std::pair{&metrics, &options.publish.metrics}}) {
        if (!*given) continue;
        if ((*given)->value.empty())
            throw provision::Error(ExitCode::usage, fmt::format("{} is empty; name a file", (*given)->source));
        *target = (*given)->value;
    }
    if (env_file) {
        if (env_file->value.empty())
            throw provision::Error(ExitCode::usage,
                                   fmt::format("{} is empty; name a file, or {} to discard the settings",
                                               env_file->source, provision::kDiscardedEnvFile));
        options.env_file = env_file->value;
        options.env_file_given = true;
    }
    std::vector<provision::OutputPath> outputs;
    if (env_file_written && options.env_file != provision::kDiscardedEnvFile)
        outputs.push_back({options.env_file, env_file ? env_file->source : "the default env file"});
    if (labels) outputs.push_back({options.publish.node_labels, labels->source});
    if (metrics) outputs.push_back({options.publish.metrics, metrics->source});
    try {
        provision::check_output_paths(outputs);
    } catch (const provision::Error&) {
        options.publish.node_labels.clear();
        options.publish.metrics.clear();
        throw;
    }
}

// Parses the command line into Options; throws Error(usage) on bad input.
// Returns false when --help or --version was answered.
bool parse(int argc, char** argv, provision::Options& options) {
    options.environment = provision::environment_snapshot();
    const auto& env = options.environment;
    auto from_env = [&](const char* name) -> std::string {
        const auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
    };

    CLI::App app{"Detects the GPUs, selects an attention mechanism from TOML recipes, validates it on the GPU,\n"
                 "writes the env settings, then (with -- COMMAND) execs the workload.",
                 "provision"};
    app.footer(std::string(kExitCodes) + provision::environment_help());
    app.set_version_flag("--version", version_text(env), "print the version, the built-in recipes' digest and "
                                                         "the GPU targets of the kernels, then exit");
    std::string print_recipes_folder;
    app.add_option("--print-recipes", print_recipes_folder,
                   "write the built-in recipes into DIR (created; existing files are never overwritten), then exit")
        ->option_text("DIR");
    // Everything from the first argument that is not provision's own (or
    // from '--') is the COMMAND: `provision cmd --version` runs cmd --version.
    app.prefix_command();
    std::string validate = "quick";
    bool no_validate = false;
    std::string fetch_timeout, validate_timeout;
    std::vector<std::string> site_packages, recipes;
    app.add_flag("--check", options.check, "CI mode: lint recipes, detect, select, validate; exit non-zero on any error");
    app.add_flag("--explain", options.explain, "show every candidate mechanism with its reasons");
    app.add_flag("--json", options.json, "print the report as JSON on stdout (human text stays on stderr); with "
                                         "--repeat one report a line (JSON Lines)");
    app.add_option("--workload", options.workload, "workload recipe to apply [env: PROVISION_WORKLOAD]");
    // One value per occurrence: a greedy list would swallow the '--' before COMMAND.
    app.add_option("--recipe", recipes, "extra recipe file, folder or https:// URL, merged over the built-ins; "
                                        "repeatable [env: PROVISION_RECIPE, colon-separated]")
        ->allow_extra_args(false);
    app.add_flag("--allow-http", options.fetch.allow_http,
                 "allow plain http:// for --recipe and --report-url (else https only) [env: PROVISION_ALLOW_HTTP=1]");
    app.add_option("--fetch-timeout", fetch_timeout,
                   "seconds a recipe URL may take to download, connecting included (default 10) "
                   "[env: PROVISION_FETCH_TIMEOUT]");
    app.add_option("--report-url", options.report_post.url,
                   "POST the JSON report to this https:// URL before the handoff; failures only warn "
                   "[env: PROVISION_REPORT_URL]")
        ->envname("PROVISION_REPORT_URL");
    app.add_option("--env-file", options.env_file, "where to write the env settings; /dev/null discards them "
                                                   "[env: PROVISION_ENV_FILE]");
    app.add_option("--site-packages", site_packages, "Python site-packages folder to read instead of the workload "
                                                     "Python's; repeatable [env: PROVISION_SITE_PACKAGES, "
                                                     "colon-separated]")
        ->allow_extra_args(false);
    app.add_option("--python", options.python,
                   "the Python interpreter (or its venv/conda folder) that will run the workload; its packages "
                   "decide the selection (default: the COMMAND's, VIRTUAL_ENV, CONDA_PREFIX, python3 on PATH) "
                   "[env: PROVISION_PYTHON]")
        ->envname("PROVISION_PYTHON");
    app.add_option("--gpu-fixture", options.gpu_fixture, "simulated machine (TOML) instead of NVML and the driver "
                                                         "[env: PROVISION_GPU_FIXTURE]")
        ->envname("PROVISION_GPU_FIXTURE");
    app.add_option("--validate", validate, "GPU validation: quick (default), full (adds throughput) or off "
                                           "[env: PROVISION_VALIDATE, 0 = off]")
        ->check(CLI::IsMember({"quick", "full", "off"}));
    app.add_flag("--no-validate", no_validate, "skip GPU validation (same as --validate=off)");
    app.add_option("--validate-timeout", validate_timeout,
                   "seconds each GPU's checks may take before they are stopped [env: PROVISION_VALIDATE_TIMEOUT]");
    app.add_option("--node-labels", options.publish.node_labels,
                   "write the node's labels for Kubernetes here, as a Node Feature Discovery feature file "
                   "(.../features.d/provision) [env: PROVISION_NODE_LABELS]")
        ->option_text("PATH");
    app.add_option("--metrics", options.publish.metrics,
                   "write the run's metrics here, as a node-exporter textfile (*.prom) [env: PROVISION_METRICS]")
        ->option_text("PATH");
    std::string repeat;
    app.add_option("--repeat", repeat,
                   "run again every SECONDS (0.001 to 86400) until stopped, rewriting --node-labels and --metrics; "
                   "never starts a COMMAND [env: PROVISION_REPEAT]")
        ->option_text("SECONDS");

    // Known before parsing, so that even a command line CLI11 refuses
    // replaces what an earlier run published (the flags, when given, win).
    options.publish.node_labels = from_env("PROVISION_NODE_LABELS");
    options.publish.metrics = from_env("PROVISION_METRICS");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);
        return false;
    } catch (const CLI::CallForVersion&) {
        std::puts(version_text(env).c_str());
        return false;
    } catch (const CLI::ParseError& error) {
        // The paths the command line gave, though another option was refused;
        // none is written where they could not be written as asked.
        if (app.count("--env-file") == 0 && env.count("PROVISION_ENV_FILE") > 0)
            options.env_file = from_env("PROVISION_ENV_FILE");
        std::vector<provision::OutputPath> outputs;
        for (const auto& [flag, target] : {std::pair{"--env-file", &options.env_file},
                                           std::pair{"--node-labels", &options.publish.node_labels},
                                           std::pair{"--metrics", &options.publish.metrics}}) {
            if (app.count(flag) > 0 && !app[flag]->results().empty()) *target = app[flag]->results().back();
            if (!target->empty() && *target != provision::kDiscardedEnvFile) outputs.push_back({*target, flag});
        }
        try {
            provision::check_output_paths(outputs);
        } catch (const provision::Error&) {
            options.publish.node_labels.clear();
            options.publish.metrics.clear();
        }
        throw provision::Error(ExitCode::usage, fmt::format("{} (see provision --help)", error.what()));
    }
    // A flag wins over its variable; either names itself in messages.
    auto setting = [&](const char* flag, const char* variable) -> std::optional<Setting> {
        if (app.count(flag) > 0) return Setting{app[flag]->as<std::string>(), flag};
        if (const auto it = env.find(variable); it != env.end()) return Setting{it->second, variable};
        return std::nullopt;
    };
    // First, so that a usage error found later still replaces what an
    // earlier run published.  --check and --repeat write the env file only
    // where asked to.
    const auto repeat_setting = setting("--repeat", "PROVISION_REPEAT");
    const auto env_file = setting("--env-file", "PROVISION_ENV_FILE");
    read_outputs(setting("--node-labels", "PROVISION_NODE_LABELS"), setting("--metrics", "PROVISION_METRICS"),
                 env_file, env_file || (!options.check && !repeat_setting), options);
    options.command = command_from(app.remaining());

    if (app.count("--print-recipes") > 0) {
        print_recipes(print_recipes_folder);
        return false;
    }
    constexpr double kMaxTimeoutSeconds = 3600;
    if (const auto& interval = repeat_setting) {
        constexpr double kMaxRepeatSeconds = 86400;
        options.repeat_interval = provision::parse_duration(interval->value, interval->source, kMaxRepeatSeconds);
        if (!options.command.empty())
            throw provision::Error(ExitCode::usage,
                                   fmt::format("{} keeps provision running and never starts a COMMAND; run the "
                                               "workload without it (see provision --help)",
                                               interval->source));
    }
    if (const auto workload = setting("--workload", "PROVISION_WORKLOAD"))
        options.workload = provision::trimmed(workload->value);
    if (app.count("--allow-http") == 0 && env.count("PROVISION_ALLOW_HTTP") > 0)
        options.fetch.allow_http = provision::parse_boolean(from_env("PROVISION_ALLOW_HTTP"), "PROVISION_ALLOW_HTTP");
    if (const auto timeout = setting("--fetch-timeout", "PROVISION_FETCH_TIMEOUT"))
        options.fetch.total_timeout_ms =
            provision::parse_duration(timeout->value, timeout->source, kMaxTimeoutSeconds).count();
    if (const auto timeout = setting("--validate-timeout", "PROVISION_VALIDATE_TIMEOUT"))
        options.validate_timeout_s =
            static_cast<double>(provision::parse_duration(timeout->value, timeout->source, kMaxTimeoutSeconds).count()) /
            1000;
    // Read where an override is, but checked here so a typo never waits for one.
    if (env.count("PROVISION_FORCE") > 0)
        (void)provision::parse_boolean(from_env("PROVISION_FORCE"), "PROVISION_FORCE");
    options.recipes = recipes.empty() ? provision::split_location_list(from_env("PROVISION_RECIPE")) : recipes;
    options.fetch.connect_timeout_ms = std::min(options.fetch.connect_timeout_ms, options.fetch.total_timeout_ms);
    options.fetch.cache_dir = provision::default_cache_dir(env);
    options.report_post.allow_http = options.fetch.allow_http;
    options.report_post.headers = provision::report_headers_from(from_env("PROVISION_REPORT_HEADER"));
    // CLI11 counts a value from the environment as given: look at the words.
    char** const options_end =
        std::find_if(argv + 1, argv + argc, [](const char* word) { return std::string_view(word) == "--"; });
    const bool python_on_command_line = std::any_of(argv + 1, options_end, [](const char* word) {
        const std::string_view text = word;
        return text == "--python" || text.starts_with("--python=");
    });
    if (!options.python.empty() && !python_on_command_line) options.python_option_name = "PROVISION_PYTHON";
    options.site_packages = site_packages.empty() ? split_colons(from_env("PROVISION_SITE_PACKAGES")) : site_packages;
    // --no-validate and --validate decide alone: a bad PROVISION_VALIDATE is
    // an error only when it is the one that counts.
    if (no_validate) {
        options.validate = provision::ValidateMode::off;
    } else if (app.count("--validate") == 0) {
        // Besides a mode's name: 0 is off, 1 (or nothing) quick.
        static const std::map<std::string, provision::ValidateMode> kShorthands = {
            {"", provision::ValidateMode::quick}, {"0", provision::ValidateMode::off},
            {"1", provision::ValidateMode::quick}};
        const std::string from = provision::lowercase(provision::trimmed(from_env("PROVISION_VALIDATE")));
        std::optional<provision::ValidateMode> mode = provision::parse_validate_mode(from);
        if (const auto shorthand = kShorthands.find(from); shorthand != kShorthands.end()) mode = shorthand->second;
        if (!mode)
            throw provision::Error(ExitCode::usage,
                                   fmt::format("PROVISION_VALIDATE={}: expected quick, full, off or 0",
                                               provision::printable(from_env("PROVISION_VALIDATE"), 64)));
        options.validate = *mode;
    } else {
        options.validate = *provision::parse_validate_mode(validate);  // CLI11 checked it is one
    }
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
    std::fprintf(stderr, "provision: %s\n", message.c_str());
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
        std::fprintf(stderr, "provision: error: %s\n", error.what());
        // Exits 2 and 3 come before any report; later failures (exec) follow one.
        const bool before_report = error.code() == ExitCode::usage || error.code() == ExitCode::invalid_input;
        if (json && before_report) print_json_error(static_cast<int>(error.code()), error.what());
        if (before_report) provision::publish_stopped_run(options, error);
        return static_cast<int>(error.code());
    } catch (const std::exception& error) {
        return internal_error(json, error.what(), options);
    } catch (...) {
        return internal_error(json, "an unknown exception", options);
    }
}
