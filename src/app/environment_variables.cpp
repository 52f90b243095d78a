#include "app/environment_variables.h"

#include <fmt/format.h>

namespace provision {

const std::vector<EnvironmentVariable>& environment_variables() {
    static const std::vector<EnvironmentVariable> table = {
        {"PROVISION_WORKLOAD", "--workload", "workload recipe (default generic)"},
        {"PROVISION_RECIPE", "--recipe", "extra recipe files, folders or https:// URLs, colon-separated"},
        {"PROVISION_BUILTIN_RECIPES", "", "a folder of recipes that replaces the built-in ones"},
        {"PROVISION_ALLOW_HTTP", "--allow-http", "1: allow plain http:// for recipes and the report"},
        {"PROVISION_FETCH_TIMEOUT", "--fetch-timeout", "seconds a recipe URL may take (default 10)"},
        {"PROVISION_CACHE_DIR", "", "remote recipe cache (default $XDG_CACHE_HOME/provision or ~/.cache/provision)"},
        {"PROVISION_REPORT_URL", "--report-url", "POST the JSON report here before the handoff"},
        {"PROVISION_REPORT_HEADER", "", "extra headers for the report POST, one 'Name: value' per line"},
        {"PROVISION_ENV_FILE", "--env-file", "where the env settings go (default /workspace/venv/.env_settings)"},
        {"PROVISION_SITE_PACKAGES", "--site-packages", "site-packages folders to read instead, colon-separated"},
        {"PROVISION_PYTHON", "--python", "the Python interpreter that will run the workload"},
        {"PROVISION_GPU_FIXTURE", "--gpu-fixture", "a simulated machine (TOML) instead of NVML and the driver"},
        {"PROVISION_VALIDATE", "--validate", "quick (default), full or off (0 = off)"},
        {"PROVISION_VALIDATE_TIMEOUT", "--validate-timeout", "seconds each GPU's checks may take (default 5)"},
        {"PROVISION_DETECT_TIMEOUT", "", "seconds GPU detection may take (default 20)"},
        {"PROVISION_NODE_LABELS", "--node-labels", "the node's labels for Kubernetes, as an NFD feature file"},
        {"PROVISION_METRICS", "--metrics", "the run's metrics, as a node-exporter textfile (*.prom)"},
        {"PROVISION_REPEAT", "--repeat", "seconds between rounds of a run kept going, rewriting labels and metrics"},
        {"PROVISION_ATTENTION", "", "a mechanism name or alias forces the choice, unless it cannot serve; auto chooses"},
        {"PROVISION_FORCE", "", "1: use PROVISION_ATTENTION's mechanism even where it cannot serve, degraded"},
        {"PROVISION_NVML_LIBRARY", "", "the NVML library to load (default libnvidia-ml.so.1)"},
        {"PROVISION_CUDA_LIBRARY", "", "the CUDA driver library to load (default libcuda.so.1)"},
        {"PROVISION_CURL_LIBRARY", "", "the libcurl to load for URLs (default libcurl.so.4)"},
        {"CUDA_VISIBLE_DEVICES", "", "the GPUs the workload sees, parsed as CUDA parses it"},
        {"VIRTUAL_ENV", "", "the workload's venv, when no --python and no COMMAND names an interpreter"},
        {"CONDA_PREFIX", "", "the workload's conda environment, after VIRTUAL_ENV"},
        {"PATH", "", "where python3 (and a COMMAND) is looked up"},
        {"PYTHONPATH", "", "folders the workload's Python reads before its site-packages"},
        {"PYTHONNOUSERSITE", "", "set: the user site (~/.local/lib/pythonX.Y) is not read"},
        {"PYTHONUSERBASE", "", "where the user site is (default ~/.local)"},
        {"HOME", "", "the user site's and the recipe cache's home"},
        {"XDG_CACHE_HOME", "", "the recipe cache's parent folder"},
        {"LD_LIBRARY_PATH", "", "searched for CUDA forward-compatibility libraries (cuda_compat_libs)"},
    };
    return table;
}

std::string environment_help() {
    std::string text = "Environment variables (a flag, where there is one, wins):\n";
    for (const auto& variable : environment_variables())
        text += fmt::format("  {:<27}{}{}\n", variable.name,
                            variable.option.empty() ? std::string() : fmt::format("[{}] ", variable.option),
                            variable.meaning);
    return text;
}

}  // namespace provision
