// provision: detect the GPUs, choose an attention mechanism, prove it on the
// GPU, write the env settings, and hand off to the workload.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/options.h"
#include "app/pipeline.h"
#include "core/error.h"
#include "net/location_list.h"
#include "net/recipe_cache.h"
#include "net/report_post.h"
#include "recipe/builtin_recipes.h"
#include "recipe/recipe_export.h"
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
    "Exit status: 0 ok (with COMMAND: the workload's own), 2 usage, 3 bad recipe or fixture,\n"
    "4 no mechanism can serve / override refused, 5 validation failed or a GPU deemed unhealthy,\n"
    "6 env file could not be written, 126/127 COMMAND cannot be executed / not found.\n"
    "Environment: PROVISION_ATTENTION=<mechanism|auto> forces a choice (refused unless it can\n"
    "be served, or PROVISION_FORCE=1); CUDA_VISIBLE_DEVICES is honoured.\n"
    "Remote recipes are cached in PROVISION_CACHE_DIR (default $XDG_CACHE_HOME/provision or\n"
    "~/.cache/provision) and revalidated by ETag; when the server fails the cached copy is used\n"
    "with a warning, and without one the run stops (exit 3).  PROVISION_REPORT_HEADER adds\n"
    "headers to the report POST, one 'Name: value' per line; header values and credentials in\n"
    "URLs are never printed.";

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
    app.footer(kExitCodes);
    app.set_version_flag("--version", version_text(env), "print the version, the built-in recipes' digest and "
                                                         "the GPU targets of the kernels, then exit");
    std::string print_recipes_folder;
    app.add_option("--print-recipes", print_recipes_folder,
                   "write the built-in recipes into DIR (created; existing files are never overwritten), then exit")
        ->option_text("DIR");
    std::string validate = "quick";
    bool no_validate = false;
    std::vector<std::string> site_packages, recipes;
    app.add_flag("--check", options.check, "CI mode: lint recipes, detect, select, validate; exit non-zero on any error");
    app.add_flag("--explain", options.explain, "show every candidate mechanism with its reasons");
    app.add_flag("--json", options.json, "print the report as JSON on stdout (human text stays on stderr)");
    app.add_option("--workload", options.workload, "workload recipe to apply [env: PROVISION_WORKLOAD]")
        ->envname("PROVISION_WORKLOAD");
    // One value per occurrence: a greedy list would swallow the '--' before COMMAND.
    app.add_option("--recipe", recipes, "extra recipe file, folder or https:// URL, merged over the built-ins; "
                                        "repeatable [env: PROVISION_RECIPE, colon-separated]")
        ->allow_extra_args(false);
    app.add_flag("--allow-http", options.fetch.allow_http,
                 "allow plain http:// for --recipe and --report-url (else https only) [env: PROVISION_ALLOW_HTTP=1]")
        ->envname("PROVISION_ALLOW_HTTP");
    double fetch_timeout_s = static_cast<double>(options.fetch.total_timeout_ms) / 1000;
    app.add_option("--fetch-timeout", fetch_timeout_s,
                   "seconds a recipe URL may take to download, connecting included (default 10) "
                   "[env: PROVISION_FETCH_TIMEOUT]")
        ->envname("PROVISION_FETCH_TIMEOUT")
        ->check(CLI::PositiveNumber);
    app.add_option("--report-url", options.report_post.url,
                   "POST the JSON report to this https:// URL before the handoff; failures only warn "
                   "[env: PROVISION_REPORT_URL]")
        ->envname("PROVISION_REPORT_URL");
    app.add_option("--env-file", options.env_file, "where to write the env settings [env: PROVISION_ENV_FILE]")
        ->envname("PROVISION_ENV_FILE");
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
    app.add_option("--validate-timeout", options.validate_timeout_s,
                   "seconds each GPU's checks may take before they are stopped [env: PROVISION_VALIDATE_TIMEOUT]")
        ->envname("PROVISION_VALIDATE_TIMEOUT")
        ->check(CLI::PositiveNumber);
    app.add_option("command", options.command, "workload to exec after '--', with its arguments");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout);
        return false;
    } catch (const CLI::CallForVersion&) {
        std::puts(version_text(env).c_str());
        return false;
    } catch (const CLI::ParseError& error) {
        throw provision::Error(ExitCode::usage, fmt::format("{} (see provision --help)", error.what()));
    }

    if (app.count("--print-recipes") > 0) {
        print_recipes(print_recipes_folder);
        return false;
    }
    options.env_file_given = app.count("--env-file") > 0 || env.count("PROVISION_ENV_FILE") > 0;
    options.recipes = recipes.empty() ? provision::split_location_list(from_env("PROVISION_RECIPE")) : recipes;
    options.fetch.total_timeout_ms = std::max(1L, std::lround(fetch_timeout_s * 1000));
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
    if (app.count("--validate") == 0) {
        const std::string from = from_env("PROVISION_VALIDATE");
        if (from == "0" || from == "off") validate = "off";
        else if (from == "quick" || from == "full" || from == "1" || from.empty()) validate = from == "full" ? "full" : "quick";
        else
            throw provision::Error(ExitCode::usage,
                                   fmt::format("PROVISION_VALIDATE={}: expected quick, full, off or 0", from));
    }
    options.validate = no_validate ? "off" : validate;
    return true;
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
    try {
        provision::Options options;
        if (!parse(argc, argv, options)) return 0;
        return provision::carry_out(provision::plan_run(options), options);
    } catch (const provision::Error& error) {
        std::fprintf(stderr, "provision: error: %s\n", error.what());
        return static_cast<int>(error.code());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "provision: internal error: %s\n", error.what());
        return 1;
    }
}
