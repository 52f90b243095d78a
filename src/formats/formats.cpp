#include "formats/formats.h"

#include <fmt/format.h>

namespace provision {

FormatsDecision decide_formats(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                               const std::string& mechanism, const PackageIndex& packages,
                               const CheckVerdicts& checks, const UserOverrides& user) {
    FormatsDecision decision;
    for (const auto& [name, feature] : recipes.features) {
        decision.features[name] = feature_enabled(feature, inventory, checks, packages);
        if (!feature.number_format) continue;
        FormatReport format = judge_format(feature, inventory, recipes, checks, packages);
        for (const auto& problem : format.gate_problems)
            decision.messages.push_back(Message::note(fmt::format("{} is off: {}", name, problem)));
        decision.formats.push_back(std::move(format));
    }
    decision.dtype = choose_dtype(decision.formats, recipes, workload, mechanism, user);
    const DtypeChoice& dtype = decision.dtype;
    if (dtype.user == DtypeOverride::unsupported || dtype.user == DtypeOverride::failed_check)
        decision.messages.push_back(Message::error(fmt::format("PROVISION_DTYPE={} cannot be served: {} (set "
                                                               "PROVISION_FORCE=1 to use it anyway)",
                                                               dtype.user_value, dtype.problem)));
    if (dtype.user == DtypeOverride::forced)
        decision.messages.push_back(Message::warning(
            fmt::format("PROVISION_DTYPE={} is forced by PROVISION_FORCE=1 although {}", dtype.user_value, dtype.problem)));
    return decision;
}

}  // namespace provision
