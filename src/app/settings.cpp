#include "app/settings.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/error.h"
#include "core/setting_values.h"
#include "core/states.h"
#include "core/text.h"
#include "kernels/fault_injection.h"
#include "native/loader_folders.h"
#include "net/location_list.h"
#include "net/report_post.h"
#include "workload_env/env_file.h"

namespace provision {
namespace {

constexpr double kMaxTimeoutSeconds = 3600;
constexpr double kMaxRepeatSeconds = 86400;

// PATH-like: items between colons, empty ones dropped.
std::vector<std::string> split_colons(const std::string& text) {
    std::vector<std::string> parts = native::split(text, ':');
    std::erase_if(parts, [](const std::string& part) { return part.empty(); });
    return parts;
}

const std::string& last(const SettingValue& given) { return given.words.back(); }

bool switched_on(const SettingValue& given) { return given.from_flag || parse_boolean(last(given), given.source); }

std::chrono::milliseconds seconds(const SettingValue& given, double max_seconds) {
    return parse_duration(last(given), given.source, max_seconds);
}


// A TCP port: a whole number from 1 to 65535.
std::uint16_t port_number(const SettingValue& given) {
    const std::string text = trimmed(last(given));
    unsigned port = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
        throw Error(ExitCode::usage,
                    fmt::format("{}={}: expected a port, a whole number from 1 to 65535", given.source,
                                echoed(last(given))));
    return static_cast<std::uint16_t>(port);
}

// A library to load: empty keeps the default.
void library(const SettingValue& given, std::string& field) {
    if (!last(given).empty()) field = last(given);
}

// Blanks around a value are a quoting slip in a pod spec; "auto" (or
// nothing) leaves the choice to provision.
std::optional<std::string> choice(const SettingValue& given) {
    const std::string value = lowercase(trimmed(last(given)));
    if (value.empty() || value == "auto") return std::nullopt;
    return last(given);
}

// A whole number from 1 to 64.
int worker_process_count(const SettingValue& given) {
    const std::string text = trimmed(last(given));
    int count = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || count < 1 || count > 64)
        throw Error(ExitCode::usage,
                    fmt::format("{}={}: expected a whole number from 1 to 64", given.source, echoed(last(given))));
    return count;
}

BusyGpuPolicy busy_gpu_policy(const SettingValue& given) {
    if (const auto policy = parse_busy_gpu_policy(lowercase(trimmed(last(given))))) return *policy;
    throw Error(ExitCode::usage, fmt::format("{}={}: expected fail or share", given.source, echoed(last(given))));
}

// A count or a rank from the job's launcher: empty is unset, and a value that
// is no whole number is left out with a note (the variable is the launcher's,
// not provision's, and may mean something else to another program).
void launcher_number(const SettingValue& given, std::optional<std::int64_t>& field,
                     network::LauncherVariables& launcher) {
    const std::string text = trimmed(last(given));
    if (text.empty()) return;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) {
        launcher.ignored.push_back(fmt::format("{}={}", given.source, echoed(last(given))));
        return;
    }
    field = value;
}

// PET_NNODES: "N", or elastic "MIN:MAX" (torchrun's --nnodes): the job spans
// at most MAX nodes and starts with MIN.  A MIN that is no whole number from
// 1 to MAX is left out with a note: the job is then MAX nodes.
void launcher_node_range(const SettingValue& given, network::LauncherVariables& launcher) {
    const std::string text = trimmed(last(given));
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) {
        launcher_number(given, launcher.pet_nnodes, launcher);
        return;
    }
    const auto number = [](std::string_view part) -> std::optional<std::int64_t> {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
        if (part.empty() || error != std::errc() || end != part.data() + part.size()) return std::nullopt;
        return value;
    };
    const auto most = number(std::string_view(text).substr(colon + 1));
    if (!most || *most < 0) {
        launcher.ignored.push_back(fmt::format("{}={}", given.source, echoed(last(given))));
        return;
    }
    launcher.pet_nnodes = *most;
    const auto fewest = number(std::string_view(text).substr(0, colon));
    if (fewest && *fewest >= 1 && *fewest <= *most) {
        launcher.pet_nnodes_min = *fewest;
    } else {
        launcher.notes.push_back(fmt::format("{}={}: an elastic job's MIN must be a whole number from 1 to MAX; the "
                                             "job is taken to be {} nodes",
                                             given.source, echoed(last(given)), *most));
    }
}

void master_address(const SettingValue& given, std::string& field, bool only_if_unset) {
    const std::string text = trimmed(last(given));
    if (!text.empty() && !(only_if_unset && !field.empty())) field = text;
}

ValidateMode validate_mode(const SettingValue& given) {
    // Besides a mode's name the variable takes 0 (off), 1 or nothing (quick).
    const std::string text = lowercase(trimmed(last(given)));
    if (!given.from_flag && (text.empty() || text == "1")) return ValidateMode::quick;
    if (!given.from_flag && text == "0") return ValidateMode::off;
    if (const auto mode = parse_validate_mode(text)) return *mode;
    throw Error(ExitCode::usage,
                fmt::format("{}={}: expected quick, full, off or 0", given.source, echoed(last(given))));
}

// A row for a variable of another program's that provision reads as that
// program does (`owner`: "CUDA", "NCCL", ...).
Setting others(std::string_view owner, std::string_view variable, std::string_view help, SettingDecoder decode = nullptr) {
    return {.variable = variable, .help = help, .decode = decode, .owner = owner};
}

// The table.  Outputs come first: they are decoded before the rest.
const std::vector<Setting> kSettings = {
    {"--env-file", "PROVISION_ENV_FILE", "PATH", "where to write the env settings; /dev/null discards them",
     SettingShape::path,
     [](const SettingValue& v, Options& o) {
         o.env_file = last(v);
         o.env_file_given = true;
     },
     {}, {}, true},
    {"--node-labels", "PROVISION_NODE_LABELS", "PATH",
     "write the node's labels for Kubernetes here, as a Node Feature Discovery feature file "
     "(.../features.d/provision)",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.publish.node_labels = last(v); }, {},
     {}, true},
    {"--metrics", "PROVISION_METRICS", "PATH", "write the run's metrics here, as a node-exporter textfile (*.prom)",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.publish.metrics = last(v); }, {}, {},
     true},

    {"--check", {}, {}, "CI mode: lint recipes, detect, select, validate; exit non-zero on any error",
     SettingShape::switch_flag, [](const SettingValue&, Options& o) { o.check = true; }},
    {"--explain", {}, {}, "show every candidate mechanism with its reasons", SettingShape::switch_flag,
     [](const SettingValue&, Options& o) { o.explain = true; }},
    {"--json", {}, {},
     "print the report as JSON on stdout (human text stays on stderr); with --repeat one report a line (JSON Lines); "
     "with --print-recipes one document naming the files written",
     SettingShape::switch_flag, [](const SettingValue&, Options& o) { o.json = true; }},
    {"--workload", "PROVISION_WORKLOAD", "NAME", "workload recipe to apply (default generic)", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.workload = trimmed(last(v)); }},
    {"--recipe", "PROVISION_RECIPE", "PATH",
     "extra recipe file, folder or https:// URL, merged over the built-ins; repeatable", SettingShape::repeatable,
     [](const SettingValue& v, Options& o) { o.recipes = v.from_flag ? v.words : split_location_list(last(v)); },
     "colon-separated"},
    {{}, "PROVISION_BUILTIN_RECIPES", {}, "a folder of recipes that replaces the built-in ones", SettingShape::path,
     [](const SettingValue& v, Options& o) { o.builtin_recipes = last(v); }},
    {"--print-recipes", {}, "DIR",
     "write the built-in recipes into DIR (created; existing files are never overwritten), then exit",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.print_recipes_folder = last(v); }},
    {"--allow-http", "PROVISION_ALLOW_HTTP", {}, "allow plain http:// for --recipe and --report-url (else https only)",
     SettingShape::switch_flag, [](const SettingValue& v, Options& o) { o.fetch.allow_http = switched_on(v); }, "1"},
    {"--fetch-timeout", "PROVISION_FETCH_TIMEOUT", "SECONDS",
     "seconds a recipe URL may take to download, connecting included (default 10)", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.fetch.total_timeout_ms = seconds(v, kMaxTimeoutSeconds).count(); }},
    {{}, "PROVISION_CACHE_DIR", {}, "remote recipe cache (default $XDG_CACHE_HOME/provision, else ~/.cache/provision, else "
     "/var/cache/provision)",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.fetch.cache_dir = last(v); }},
    {"--report-url", "PROVISION_REPORT_URL", "URL",
     "POST the JSON report to this https:// URL before the handoff; failures only warn", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.report_post.url = last(v); }},
    {{}, "PROVISION_REPORT_HEADER", {}, "extra headers for the report POST, one 'Name: value' per line",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.report_post.headers = report_headers_from(last(v)); }},
    {"--site-packages", "PROVISION_SITE_PACKAGES", "DIR",
     "Python site-packages folder to read instead of the workload Python's; repeatable", SettingShape::repeatable,
     [](const SettingValue& v, Options& o) { o.site_packages = v.from_flag ? v.words : split_colons(last(v)); },
     "colon-separated"},
    {"--python", "PROVISION_PYTHON", "PATH",
     "the Python interpreter (or its venv/conda folder) that will run the workload; its packages decide the "
     "selection (default: the COMMAND's, VIRTUAL_ENV, CONDA_PREFIX, python3 on PATH)",
     SettingShape::path,
     [](const SettingValue& v, Options& o) {
         o.python = last(v);
         o.python_option_name = v.source;
     }},
    {"--gpu-fixture", "PROVISION_GPU_FIXTURE", "FILE", "simulated machine (TOML) instead of NVML and the driver",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.gpu_fixture = last(v); }},
    {"--validate", "PROVISION_VALIDATE", "quick|full|off",
     "GPU validation: quick (default), full (adds throughput) or off", SettingShape::value,
     [](const SettingValue& v, Options& o) {
         o.validate = validate_mode(v);
         o.validate_off_by = v.from_flag ? "--validate off" : fmt::format("{}={}", v.source, echoed(trimmed(last(v))));
     },
     "0 = off", "--no-validate", false,
     {"quick", "full", "off"}},
    {"--no-validate", {}, {}, "skip GPU validation (same as --validate=off)", SettingShape::switch_flag,
     [](const SettingValue&, Options& o) {
         o.validate = ValidateMode::off;
         o.validate_off_by = "--no-validate";
     }},
    {"--rendezvous-port", "PROVISION_RENDEZVOUS_PORT", "PORT",
     "the port node 0's provision listens on for the other nodes, at MASTER_ADDR, before the proof across nodes "
     "(default 29519; never the job's MASTER_PORT)",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.rendezvous_port = port_number(v); }},
    {"--rendezvous-timeout", "PROVISION_RENDEZVOUS_TIMEOUT", "SECONDS",
     "seconds every node's provision waits for the job's other nodes before the proof across nodes (default 300)",
     SettingShape::value,
     [](const SettingValue& v, Options& o) { o.rendezvous_timeout = seconds(v, kMaxTimeoutSeconds); }},
    {"--rendezvous-token-file", "PROVISION_RENDEZVOUS_TOKEN_FILE", "PATH",
     "a file holding the job's shared secret (a mounted Secret): only nodes that prove they hold it join the "
     "rendezvous; the token is never sent, printed or passed on",
     SettingShape::path, [](const SettingValue& v, Options& o) { o.rendezvous_token_file = last(v); }},
    {"--proof-timeout", "PROVISION_PROOF_TIMEOUT", "SECONDS",
     "seconds NCCL's communicator and all-reduce across the job's nodes may take (default: from the job's size and "
     "transport, docs/DESIGN.md)",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.proof_timeout = seconds(v, kMaxTimeoutSeconds); }},
    {"--validate-timeout", "PROVISION_VALIDATE_TIMEOUT", "SECONDS",
     "seconds each piece of a GPU's validation work (its checks, a round of copies) may take, from its start "
     "(default 5)",
     SettingShape::value,
     [](const SettingValue& v, Options& o) {
         o.validate_timeout_s = static_cast<double>(seconds(v, kMaxTimeoutSeconds).count()) / 1000;
     }},
    {"--worker-processes", "PROVISION_WORKER_PROCESSES", "N",
     "processes the GPUs' validation workers are split into, each opening its GPUs from a thread each (default 2; "
     "at most one per GPU)",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.worker_processes = worker_process_count(v); }},
    {"--busy-gpu", "PROVISION_BUSY_GPU", "fail|share",
     "a GPU other processes hold is not measured; fail (default): exit 7, no handoff; share: go on, degraded",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.busy_gpu = busy_gpu_policy(v); }, {}, {}, false,
     {"fail", "share"}},
    {"--apply-workarounds", "PROVISION_APPLY_WORKAROUNDS", {},
     "write the workarounds of known NCCL defects that match this job (recipes/pod.toml nccl_defects; else the "
     "finding names them)",
     SettingShape::switch_flag, [](const SettingValue& v, Options& o) { o.apply_workarounds = switched_on(v); }, "1"},
    {{}, "PROVISION_DETECT_TIMEOUT", {},
     "seconds GPU detection may take, and each validation worker the opening of its GPU (default 20)",
     SettingShape::value,
     [](const SettingValue& v, Options& o) { o.detect.time_limit = seconds(v, kMaxTimeoutSeconds); }},
    {"--repeat", "PROVISION_REPEAT", "SECONDS",
     "run again every SECONDS (0.001 to 86400) until stopped, rewriting --node-labels and --metrics; never starts "
     "a COMMAND",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.repeat_interval = seconds(v, kMaxRepeatSeconds); }},
    {{}, "PROVISION_ATTENTION", {}, "a mechanism name or alias forces the choice, unless it cannot serve; auto chooses",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.overrides.attention = choice(v); }},
    {{}, "PROVISION_FORCE", {},
     "1: use PROVISION_ATTENTION's mechanism (or PROVISION_DTYPE) even where it cannot serve, degraded",
     SettingShape::switch_flag, [](const SettingValue& v, Options& o) { o.overrides.force = switched_on(v); }},
    {{}, "PROVISION_DTYPE", {},
     "bfloat16, float16 or float32 for the workload, kept unless a visible GPU cannot run it; auto chooses",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.overrides.dtype = choice(v); }},
    {{}, "PROVISION_NVML_LIBRARY", {}, "the NVML library to load (default libnvidia-ml.so.1)", SettingShape::value,
     [](const SettingValue& v, Options& o) { library(v, o.detect.nvml_library); }},
    {{}, "PROVISION_CUDA_LIBRARY", {}, "the CUDA driver library to load (default libcuda.so.1)", SettingShape::value,
     [](const SettingValue& v, Options& o) { library(v, o.detect.cuda_library); }},
    {{}, "PROVISION_CURL_LIBRARY", {}, "the libcurl to load for URLs (default libcurl.so.4)", SettingShape::value,
     [](const SettingValue& v, Options& o) { library(v, o.curl_library); }},

    // Variables of others (CUDA, Python, the launcher, NCCL, pyenv), which
    // provision reads as their owner reads them in the workload; most are
    // read where they are used.  A launcher's fallback row comes before the
    // variable it stands in for, which overrides it when set
    // (network/job_shape.h says which launcher wins).
    others("CUDA", "CUDA_VISIBLE_DEVICES", "the GPUs the workload sees, parsed as CUDA parses it",
           [](const SettingValue& v, Options& o) { o.detect.cuda_visible_devices = last(v); }),
    others("CUDA", "CUDA_DEVICE_ORDER", "PCI_BUS_ID: CUDA numbers the GPUs as NVML does",
           [](const SettingValue& v, Options& o) { o.detect.cuda_device_order = last(v); }),
    others("Python", "VIRTUAL_ENV", "the workload's venv, when no --python and no COMMAND names an interpreter"),
    others("Python", "CONDA_PREFIX", "the workload's conda environment, after VIRTUAL_ENV"),
    others("Python", "PYTHONPATH", "folders the workload's Python reads before its site-packages"),
    others("Python", "PYTHONNOUSERSITE", "set: the user site (~/.local/lib/pythonX.Y) is not read"),
    others("Python", "PYTHONUSERBASE", "where the user site is (default ~/.local)"),
    others("pyenv", "PYENV_VERSION", "the version a pyenv shim runs, before .python-version and PYENV_ROOT/version"),
    others("system", "PATH", "where python3 (and a COMMAND) is looked up",
           [](const SettingValue& v, Options& o) { o.search_path = last(v); }),
    others("system", "HOME", "the user site's and the recipe cache's home"),
    others("system", "XDG_CACHE_HOME", "the recipe cache's parent folder"),
    others("system", "LD_LIBRARY_PATH",
           "searched for CUDA forward-compatibility libraries, the workload's NCCL and a system cuDNN",
           [](const SettingValue& v, Options& o) { o.library_path = last(v); }),

    others("launcher", "PET_NNODES", "Kubeflow's node count for torchrun (N or MIN:MAX)",
           [](const SettingValue& v, Options& o) { launcher_node_range(v, o.launcher); }),
    others("launcher", "PET_NODE_RANK", "Kubeflow's rank of this node",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.pet_node_rank, o.launcher); }),
    others("launcher", "NNODES", "the job's node count, as torchrun's --nnodes",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.nnodes, o.launcher); }),
    others("launcher", "NODE_RANK", "this node's rank, as torchrun's --node-rank",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.node_rank, o.launcher); }),
    others("launcher", "WORLD_SIZE", "processes in the job (torchrun's workers)",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.world_size, o.launcher); }),
    others("launcher", "LOCAL_WORLD_SIZE", "processes on this node (torchrun's workers)",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.local_world_size, o.launcher); }),
    others("launcher", "GROUP_RANK", "this node's rank (torchrun's workers)",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.group_rank, o.launcher); }),
    others("launcher", "RANK", "this process's global rank (torchrun's workers)",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.rank, o.launcher); }),
    others("launcher", "LOCAL_RANK", "this process's rank on its node: only 0's meets the other nodes"),
    others("launcher", "SLURM_JOB_NUM_NODES", "Slurm's node count, where SLURM_NNODES is not set",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.slurm_nnodes, o.launcher); }),
    others("launcher", "SLURM_NNODES", "Slurm's node count",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.slurm_nnodes, o.launcher); }),
    others("launcher", "SLURM_NODEID", "Slurm's rank of this node",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.slurm_nodeid, o.launcher); }),
    others("launcher", "OMPI_COMM_WORLD_SIZE", "Open MPI's process count",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.ompi_world_size, o.launcher); }),
    others("launcher", "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI's processes on this node",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.ompi_local_size, o.launcher); }),
    others("launcher", "OMPI_COMM_WORLD_RANK", "Open MPI's rank of this process",
           [](const SettingValue& v, Options& o) { launcher_number(v, o.launcher.ompi_rank, o.launcher); }),
    others("launcher", "PET_MASTER_ADDR", "Kubeflow's MASTER_ADDR for torchrun, where MASTER_ADDR is not set",
           [](const SettingValue& v, Options& o) { master_address(v, o.launcher.master_addr, /*only_if_unset=*/true); }),
    others("launcher", "MASTER_ADDR", "where the job's nodes meet: the route to it is checked on several nodes",
           [](const SettingValue& v, Options& o) { master_address(v, o.launcher.master_addr, /*only_if_unset=*/false); }),
    others("launcher", "MASTER_PORT", "the job's own port, which the rendezvous never takes; part of the job's key"),
    others("launcher", "TORCHELASTIC_RUN_ID", "torchrun's run id, part of the job's key at the rendezvous"),
    others("launcher", "SLURM_JOB_ID", "Slurm's job id, part of the job's key where TORCHELASTIC_RUN_ID is not set"),

    // NCCL's, read as the workload's NCCL will read them (network/, pod/):
    // the paths and the network NCCL takes.
    others("NCCL", "NCCL_CUMEM_ENABLE", "whether NCCL shares GPU memory between processes through cuMem"),
    others("NCCL", "NCCL_CUMEM_HOST_ENABLE", "whether NCCL's host memory is cuMem memory"),
    others("NCCL", "NCCL_SOCKET_IFNAME", "the interfaces NCCL's sockets may use"),
    others("NCCL", "NCCL_SOCKET_FAMILY", "AF_INET or AF_INET6 for NCCL's sockets"),
    others("NCCL", "NCCL_COMM_ID", "NCCL's bootstrap address, whose subnet picks the interface"),
    others("NCCL", "NCCL_IB_HCA", "the RDMA devices and ports NCCL may use"),
    others("NCCL", "NCCL_IB_DISABLE", "1: NCCL does not use RDMA"),
    others("NCCL", "NCCL_NET", "the network plugin NCCL is told to take (IB or Socket)"),
    others("NCCL", "NCCL_IB_GID_INDEX", "the GID index NCCL takes on RoCE"),
    others("NCCL", "NCCL_IB_ADDR_FAMILY", "the address family of the GID NCCL looks for"),
    others("NCCL", "NCCL_IB_ADDR_RANGE", "the subnet of the GID NCCL looks for"),
    others("NCCL", "NCCL_IB_ROCE_VERSION_NUM", "the RoCE version of the GID NCCL looks for"),
    others("NCCL", "NCCL_IB_ROUTABLE_FLID_GID_INDEX", "the GID index NCCL takes for routable FLIDs"),
    others("NCCL", "NCCL_DMABUF_ENABLE", "whether NCCL may use DMA-BUF for GPUDirect RDMA"),
    others("NCCL", "NCCL_NET_GDR_LEVEL", "how far from its NIC a GPU may be for GPUDirect RDMA"),
    others("NCCL", "NCCL_NET_GDR_C2C", "GPUDirect RDMA over C2C (Grace)"),
    others("NCCL", "NCCL_TOPO_FILE", "a topology file NCCL reads the GPUs' paths to the NICs from"),
    others("NCCL", "NCCL_IBVERBS_LIB", "the libibverbs NCCL opens"),
    // fabric/: whether NCCL takes multi-node NVLink, and the clique it forms.
    others("NCCL", "NCCL_MNNVL_ENABLE", "0: NCCL takes no multi-node NVLink (written by provision where its check fails)"),
    others("NCCL", "NCCL_MNNVL_UUID", "the cluster UUID NCCL groups the ranks by, in place of NVML's"),
    others("NCCL", "NCCL_MNNVL_CLIQUE_ID", "the clique id NCCL groups the ranks by, in place of NVML's"),
};

// The hooks tests set, in fault-injection builds alone.
const std::vector<Setting> kTestHooks = {
    {{}, "PROVISION_TEST_FAULT", {}, "faults the validation workers plant (\"CHECK=FAULT,...\")", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.fault = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_WORKER", {}, "simulate: the workers act their GPUs out through the CUDA driver library",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.test.simulate_workers = last(v) == "simulate"; },
     {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_WORKER_TIMELINE", {}, "a file the workers log every line in and out to, timed",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.test.worker_timeline = last(v); }, {}, {}, false,
     {}, true},
    {{}, "PROVISION_TEST_DEV", {}, "a folder in place of /dev (the GPUs' device nodes)", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.device_folder = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_SYSFS", {}, "a folder in place of /sys", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.sysfs = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_KMSG", {}, "a file of kernel log lines in place of /dev/kmsg (the GPUs' Xids)",
     SettingShape::value, [](const SettingValue& v, Options& o) { o.test.kernel_log = last(v); }, {}, {}, false, {},
     true},
    {{}, "PROVISION_TEST_SYSTEM_LIBRARIES", {}, "the loader's default folders, colon-separated", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.system_libraries = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_PROC", {}, "a folder in place of /proc (the network stage)", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.proc = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_INTERFACES", {}, "a file in place of the network interfaces' list", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.interfaces = last(v); }, {}, {}, false, {}, true},
    {{}, "PROVISION_TEST_ROUTE", {}, "the local address a route to MASTER_ADDR leaves from", SettingShape::value,
     [](const SettingValue& v, Options& o) { o.test.route = last(v); }, {}, {}, false, {}, true},
    // Read where it is used: by the one-file build's unwinder shim, before
    // anything else (src/glibc_compat.cpp).
    {{}, "PROVISION_TEST_UNWIND_FALLBACK", {}, "1: the one-file build finds unwind tables by walking the loaded objects",
     SettingShape::value, nullptr, {}, {}, false, {}, true},
};

const std::vector<Setting>& all_settings() {
    static const std::vector<Setting> table = [] {
        std::vector<Setting> rows = kSettings;
        if constexpr (kFaultInjection) rows.insert(rows.end(), kTestHooks.begin(), kTestHooks.end());
        return rows;
    }();
    return table;
}

const std::string* variable_text(const Setting& setting, const std::map<std::string, std::string>& environment) {
    if (setting.variable.empty()) return nullptr;
    const auto it = environment.find(std::string(setting.variable));
    return it == environment.end() ? nullptr : &it->second;
}

// "PATH" -> "path", "DIR" -> "folder": what an empty value should have named.
std::string noun_of(const Setting& setting) {
    if (setting.value_name == "DIR") return "folder";
    if (setting.value_name.empty()) return "path";
    return lowercase(setting.value_name);
}

// The rules every setting's value is held to before its decoder reads it
// (settings.h, SettingShape): a switch's flag takes none, a path is never
// empty, a flag with choices takes one of them.
void check_value(const Setting& setting, const SettingValue& given) {
    if (setting.shape == SettingShape::switch_flag && given.from_flag && !given.words.empty())
        throw Error(ExitCode::usage,
                    fmt::format("{}={}: {} is a switch and takes no value; give it alone to turn it on, or leave it "
                                "out{}",
                                given.source, echoed(given.words.back()), given.source,
                                setting.variable.empty()
                                    ? std::string()
                                    : fmt::format(" ({} takes 1 or 0, yes or no)", setting.variable)));
    const bool names_paths = setting.shape == SettingShape::path ||
                             (setting.shape == SettingShape::repeatable && given.from_flag);
    const auto empty = [](const std::string& word) { return word.empty(); };
    if (names_paths && std::any_of(given.words.begin(), given.words.end(), empty))
        throw Error(ExitCode::usage, fmt::format("{} is empty; name a {}, or leave {} out", given.source,
                                                 noun_of(setting), given.source));
    if (given.from_flag && !setting.choices.empty()) {
        const std::string choice = lowercase(trimmed(given.words.back()));
        if (std::find(setting.choices.begin(), setting.choices.end(), choice) == setting.choices.end())
            throw Error(ExitCode::usage, fmt::format("{}={}: expected {}", given.source, echoed(given.words.back()),
                                                     fmt::join(setting.choices, ", ")));
    }
}

// The value a setting was given, by its flag or else its variable; none
// where neither gives one (or the flag that silences the variable is given).
std::optional<SettingValue> given_value(const Setting& setting, const GivenFlags& flags,
                                        const std::map<std::string, std::string>& environment) {
    if (const auto flag = flags.find(setting.flag); !setting.flag.empty() && flag != flags.end()) {
        SettingValue given{flag->second, std::string(setting.flag), true};
        if (setting.shape != SettingShape::switch_flag && given.words.empty()) return std::nullopt;  // CLI11 requires a value
        return given;
    }
    if (!setting.unless_flag.empty() && flags.count(setting.unless_flag) > 0) return std::nullopt;
    if (const std::string* text = variable_text(setting, environment))
        return SettingValue{{*text}, std::string(setting.variable), false};
    return std::nullopt;
}

void decode(const Setting& setting, const GivenFlags& flags, const std::map<std::string, std::string>& environment,
            Options& options) {
    if (!setting.decode) return;
    if (const auto given = given_value(setting, flags, environment)) {
        check_value(setting, *given);
        setting.decode(*given, options);
    }
}

}  // namespace

const std::vector<Setting>& settings() { return all_settings(); }

bool setting_given(const Setting& setting, const GivenFlags& flags, const std::map<std::string, std::string>& environment) {
    return (!setting.flag.empty() && flags.count(setting.flag) > 0) || variable_text(setting, environment) != nullptr;
}

void check_setting_values(const GivenFlags& flags, const std::map<std::string, std::string>& environment) {
    for (const Setting& setting : settings()) {
        if (setting.names_output) continue;  // held to them as decode_outputs read it
        if (const auto given = given_value(setting, flags, environment)) check_value(setting, *given);
    }
}

void decode_outputs(const GivenFlags& flags, const std::map<std::string, std::string>& environment, Options& options) {
    for (const Setting& setting : settings())
        if (setting.names_output) decode(setting, flags, environment, options);
}

void decode_settings(const GivenFlags& flags, const std::map<std::string, std::string>& environment, Options& options) {
    for (const Setting& setting : settings())
        if (!setting.names_output) decode(setting, flags, environment, options);
}

void decode_setting(std::string_view name, const GivenFlags& flags, const std::map<std::string, std::string>& environment,
                    Options& options) {
    for (const Setting& setting : settings())
        if (setting.flag == name || setting.variable == name) decode(setting, flags, environment, options);
}

std::string flag_help(const Setting& setting) {
    if (setting.variable.empty()) return std::string(setting.help);
    if (setting.variable_form.empty()) return fmt::format("{} [env: {}]", setting.help, setting.variable);
    if (setting.shape == SettingShape::switch_flag)
        return fmt::format("{} [env: {}={}]", setting.help, setting.variable, setting.variable_form);
    return fmt::format("{} [env: {}, {}]", setting.help, setting.variable, setting.variable_form);
}

std::string environment_help() {
    std::string text = "Environment variables (a flag, where there is one, wins):\n";
    for (const Setting& setting : settings()) {
        if (setting.variable.empty() || setting.test_hook || !setting.owner.empty()) continue;
        const std::string flag = setting.flag.empty() ? std::string() : fmt::format("[{}] ", setting.flag);
        const std::string form = setting.variable_form.empty() || setting.shape == SettingShape::switch_flag
                                     ? std::string()
                                     : fmt::format(" ({})", setting.variable_form);
        text += fmt::format("  {:<26} {}{}{}\n", setting.variable, flag, setting.help, form);
    }
    text += "Variables of others that provision reads, as their owner reads them in the workload:\n";
    for (const Setting& setting : settings())
        if (!setting.owner.empty() && !setting.test_hook)
            text += fmt::format("  {:<26} [{}] {}\n", setting.variable, setting.owner, setting.help);
    return text;
}

}  // namespace provision
