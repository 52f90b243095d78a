#include "app/stage_settings.h"

#include <chrono>

#include "recipe/builtin_recipes.h"

namespace provision {

DetectionSettings detection_settings(const Options& options) {
    DetectionSettings settings{options.gpu_fixture, options.detect};
    settings.detect.sysfs = system_folders(options).sysfs;
    if (options.test.kernel_log) settings.detect.kernel_log = *options.test.kernel_log;
    return settings;
}

SystemFolders system_folders(const Options& options) {
    return {options.test.sysfs.value_or("/sys"), options.test.proc.value_or("/proc"),
            options.test.device_folder.value_or("/dev")};
}

ValidationSettings validation_settings(const Options& options) {
    ValidationSettings settings;
    ValidationOptions& workers = settings.workers;
    workers.mode = options.validate;
    workers.timeout_s = options.validate_timeout_s;
    workers.open_timeout_s = std::chrono::duration<double>(options.detect.time_limit).count();
    workers.worker_processes = options.worker_processes;
    workers.cuda_library = options.detect.cuda_library;
    workers.fault = options.test.fault;
    workers.simulate = options.test.simulate_workers;
    workers.timeline = options.test.worker_timeline;
    settings.off_by = options.validate_off_by;
    settings.nvml_library = options.detect.nvml_library;
    settings.cuda_visible_devices = options.detect.cuda_visible_devices;
    settings.simulated_machine = !options.gpu_fixture.empty();
    settings.every_mechanism = options.publish.any();
    settings.device_folder = options.test.device_folder;
    return settings;
}

// Which recipe set decided: the built-in one's digest, or "replaced" where
// PROVISION_BUILTIN_RECIPES put a folder in its place.
PublishSettings publish_settings(const Options& options) {
    return {options.publish, options.builtin_recipes.empty() ? std::string(embedded_recipes_digest()) : "replaced",
            options.command.empty()};
}

}  // namespace provision
