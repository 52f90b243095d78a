// Everything a run needs to know from the command line and the environment.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/publish_targets.h"
#include "core/states.h"
#include "core/user_overrides.h"
#include "gpu/detect_options.h"
#include "net/recipe_fetch.h"
#include "net/report_post.h"
#include "network/job_shape.h"

namespace provision {

// The test hooks of fault-injection builds (rows of the settings table
// there, absent from release builds: kernels/fault_injection.h).
struct TestHooks {
    std::string fault;                            // PROVISION_TEST_FAULT: faults the workers plant
    bool simulate_workers = false;                // PROVISION_TEST_WORKER=simulate: act the GPUs out
    std::string worker_timeline;                  // PROVISION_TEST_WORKER_TIMELINE: the workers' lines, timed
    std::optional<std::string> device_folder;     // PROVISION_TEST_DEV: in place of /dev
    std::optional<std::string> sysfs;             // PROVISION_TEST_SYSFS: in place of /sys
    std::optional<std::string> kernel_log;        // PROVISION_TEST_KMSG: in place of /dev/kmsg
    std::optional<std::string> system_libraries;  // PROVISION_TEST_SYSTEM_LIBRARIES: the loader's default folders
    std::optional<std::string> proc;              // PROVISION_TEST_PROC: in place of /proc
    std::optional<std::string> interfaces;        // PROVISION_TEST_INTERFACES: the network interfaces, as a file
    std::optional<std::string> route;             // PROVISION_TEST_ROUTE: the local address that reaches MASTER_ADDR
};

struct Options {
    bool check = false;            // CI mode: lint, detect, select, validate; no env file unless asked
    bool explain = false;
    bool json = false;
    ValidateMode validate = ValidateMode::quick;
    std::string validate_off_by;   // what turned validation off ("--no-validate", "PROVISION_VALIDATE=0"), for messages
    double validate_timeout_s = 5.0;
    // A job over several nodes, --validate=full: where node 0's provision
    // meets the others' (network/rendezvous.h), and how long each waits.
    std::uint16_t rendezvous_port = 29519;
    std::chrono::milliseconds rendezvous_timeout{300000};
    std::string rendezvous_token_file;                      // "": any node that knows the job may join
    std::optional<std::chrono::milliseconds> proof_timeout;  // the proof's own limit; nullopt: from the job's size
    int worker_processes = 2;      // the GPUs' validation workers are split into this many processes
    BusyGpuPolicy busy_gpu = BusyGpuPolicy::fail;  // what a single run does with a GPU others hold
    bool apply_workarounds = false;  // write the workarounds of known NCCL defects (fabric/fabric_judgement.h)
    std::string workload = "generic";
    std::vector<std::string> recipes;        // user recipes (paths or URLs), merged over the built-in ones
    FetchOptions fetch;                      // how recipe URLs are fetched and cached
    ReportPost report_post;                  // where the JSON report goes; url "" posts nothing
    std::string env_file = "/workspace/venv/.env_settings";
    bool env_file_given = false;
    std::vector<std::string> site_packages;  // empty: the workload's Python's folders
    std::string python;                      // --python / PROVISION_PYTHON; empty: find it
    std::string python_option_name = "--python";  // which of the two gave it, for messages
    std::string gpu_fixture;
    PublishTargets publish;                  // --node-labels, --metrics: files for the cluster's tools
    // --repeat: run again at this interval (start to start) until stopped,
    // rewriting the published files; never execs a workload.
    std::optional<std::chrono::milliseconds> repeat_interval;
    std::optional<std::string> print_recipes_folder;  // --print-recipes DIR: write them, then exit
    UserOverrides overrides;                 // PROVISION_ATTENTION, PROVISION_DTYPE, PROVISION_FORCE
    DetectOptions detect;                    // the driver's libraries, the visible GPUs, detection's time limit
    std::string builtin_recipes;             // PROVISION_BUILTIN_RECIPES: a folder in place of the built-in ones
    std::string curl_library = "libcurl.so.4";
    std::string search_path;                 // PATH, where a COMMAND is looked up
    std::string library_path;                // LD_LIBRARY_PATH
    network::LauncherVariables launcher;     // the launcher's variables: how many nodes, which one this is
    std::vector<std::string> command;        // after "--"
    TestHooks test;                          // test builds only
    // The process environment, read-only, for the names recipes and NCCL
    // choose (a workload's own variables); settings are the fields above.
    std::map<std::string, std::string> process_environment;
};

std::map<std::string, std::string> environment_snapshot();

}  // namespace provision
