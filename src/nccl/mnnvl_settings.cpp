#include "nccl/mnnvl_settings.h"

#include "nccl/nccl_paths.h"

namespace provision {

MnnvlSettings mnnvl_settings(const std::optional<std::string>& enable, const std::optional<std::string>& uuid,
                             const std::optional<std::string>& clique_id) {
    MnnvlSettings settings;
    if (const auto value = nccl_parameter(enable)) {
        settings.enable = *value;
        settings.enable_set = true;
    }
    if (const auto value = nccl_parameter(uuid); value && *value != -1) settings.uuid = value;
    if (const auto value = nccl_parameter(clique_id); value && *value != -1) settings.clique_id = value;
    return settings;
}

}  // namespace provision
