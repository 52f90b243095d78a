#include "formats/dtype_choice.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/setting_values.h"
#include "core/suggest.h"
#include "core/text.h"

namespace provision {
namespace {

const FormatReport* format_of(const std::vector<FormatReport>& formats, const std::string& dtype) {
    for (const auto& format : formats)
        if (format.dtype == dtype) return &format;
    return nullptr;
}

// "is unsupported", "failed": a state as the verb of a sentence.
std::string state_phrase(FormatState state) {
    return state == FormatState::failed ? std::string("failed") : fmt::format("is {}", to_string(state));
}

// Why a format's dtype cannot be recommended.
std::string why_not(const FormatReport& format) {
    if (!format.gate_problems.empty()) return fmt::format("{}", fmt::join(format.gate_problems, "; "));
    if (format.limiting_gpu < 0) return fmt::format("{} {}: {}", format.name, state_phrase(format.state), format.why);
    return fmt::format("{} {} on {}", format.name, state_phrase(format.state), format.why);
}

// The first GPU on which `format` cannot serve, and how: a GPU outside its
// range weighs more than a failed check (it is no matter of health).
DtypeOverride hardware_problem(const FormatReport& format, std::string& words) {
    DtypeOverride found = DtypeOverride::served;
    for (const FormatState wanted : {FormatState::unsupported, FormatState::failed}) {
        for (const auto& gpu : format.gpus) {
            if (gpu.state != wanted) continue;
            words = fmt::format("{} {} on GPU {}: {}", format.name, state_phrase(gpu.state), gpu.gpu, gpu.why);
            return wanted == FormatState::unsupported ? DtypeOverride::unsupported : DtypeOverride::failed_check;
        }
    }
    return found;
}

void choose_order(const RecipeSet& recipes, const WorkloadSpec& workload, const std::string& mechanism,
                  DtypeChoice& choice) {
    const auto spec = recipes.mechanisms.find(mechanism);
    if (!workload.dtype_preference.empty()) {
        choice.order = workload.dtype_preference;
        choice.order_source = fmt::format("the '{}' workload's recipe", workload.name);
    } else if (spec != recipes.mechanisms.end() && !spec->second.dtype_preference.empty()) {
        choice.order = spec->second.dtype_preference;
        choice.order_source = fmt::format("the {} mechanism's recipe", mechanism);
    } else {
        choice.order = recipes.dtype_preference;
        choice.order_source = "the recipes' [dtypes]";
    }
}

void recommend(const std::vector<FormatReport>& formats, DtypeChoice& choice) {
    std::vector<std::string> passed_over;
    for (const auto& dtype : choice.order) {
        if (dtype == "float32") {
            choice.recommended = dtype;
            break;
        }
        const FormatReport* format = format_of(formats, dtype);
        if (format && format->enabled) {
            choice.recommended = dtype;
            break;
        }
        passed_over.push_back(format ? fmt::format("not {}: {}", dtype, why_not(*format))
                                     : fmt::format("not {}: no number format of the recipes stands for it", dtype));
    }
    if (choice.recommended.empty()) choice.recommended = "float32";  // needs no format
    choice.reason = fmt::format("the first dtype of {} order ({}) that every visible GPU runs", choice.order_source,
                                fmt::join(choice.order, ", "));
    if (!passed_over.empty()) choice.reason += fmt::format("; {}", fmt::join(passed_over, "; "));
}

void read_user_dtype(const std::vector<FormatReport>& formats, const RecipeSet& recipes, const UserOverrides& user,
                     DtypeChoice& choice) {
    if (!user.dtype) return;
    const std::string value = lowercase(trimmed(*user.dtype));
    if (value.empty() || value == "auto") return;
    const std::vector<std::string> names = recipes.dtype_names();
    if (std::find(names.begin(), names.end(), value) == names.end()) {
        std::string message = fmt::format("PROVISION_DTYPE={}: unknown dtype", echoed(*user.dtype));
        const std::string hint = value.size() <= 64 ? closest_match(value, names) : std::string();
        if (!hint.empty()) message += fmt::format("; did you mean '{}'?", hint);
        message += fmt::format(" (valid: {}, auto)", fmt::join(names, ", "));
        throw Error(ExitCode::usage, message);
    }
    choice.user_value = *user.dtype;
    choice.value = value;
    const FormatReport* format = format_of(formats, value);
    choice.user = format ? hardware_problem(*format, choice.problem) : DtypeOverride::served;
    if (choice.user == DtypeOverride::served) return;
    if (user.force) choice.user = DtypeOverride::forced;
}

}  // namespace

DtypeChoice choose_dtype(const std::vector<FormatReport>& formats, const RecipeSet& recipes,
                         const WorkloadSpec& workload, const std::string& mechanism,
                         const UserOverrides& user) {
    DtypeChoice choice;
    choose_order(recipes, workload, mechanism, choice);
    recommend(formats, choice);
    read_user_dtype(formats, recipes, user, choice);
    if (choice.user == DtypeOverride::none) choice.value = choice.recommended;
    return choice;
}

}  // namespace provision
