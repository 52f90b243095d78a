// Each stage's own settings, built once from the options (plan_run,
// carry_out, main): a stage is handed what it uses, not the whole command
// line, the test hooks or the process environment.
#pragma once

#include <optional>
#include <string>

#include "app/options.h"
#include "app/publishing.h"
#include "app/validation_step.h"
#include "gpu/detect_options.h"

namespace provision {

// What detection reads: a simulated machine (a GPU fixture), or the real one
// through the driver's libraries, with /sys and /dev/kmsg where the test
// hooks put them.
struct DetectionSettings {
    std::string gpu_fixture;  // "": the real machine
    DetectOptions detect;
};

// The folders of the machine provision reads (in test builds the test hooks
// may stand in for them).
struct SystemFolders {
    std::string sysfs = "/sys";
    std::string proc = "/proc";
    std::string devices = "/dev";
};

DetectionSettings detection_settings(const Options& options);
SystemFolders system_folders(const Options& options);
ValidationSettings validation_settings(const Options& options);
PublishSettings publish_settings(const Options& options);

}  // namespace provision
