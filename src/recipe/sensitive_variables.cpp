#include "recipe/sensitive_variables.h"

#include <algorithm>
#include <array>

namespace provision {

bool is_sensitive_variable(std::string_view name) {
    static constexpr std::array<std::string_view, 22> kNames = {
        // shells
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "PATH", "PROMPT_COMMAND",
        // interpreters
        "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PERL5OPT", "PERL5LIB",
        "NODE_OPTIONS", "GCONV_PATH",
        // devices
        "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES"};
    return name.starts_with("LD_") || std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

}  // namespace provision
