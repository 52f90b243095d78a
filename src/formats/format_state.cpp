#include "formats/format_state.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace provision {
namespace {

// Why a gated package is not good enough, or nothing: the first installed
// alternative that satisfies the gate clears it; none installed clears it too.
std::optional<std::string> unmet_gate(const PackageAlternatives& gate, const PackageIndex& packages) {
    std::vector<std::string> problems;
    for (const auto& text : gate.any_of) {
        const Requirement requirement = Requirement::parse(text);
        const InstalledPackage* installed = packages.find(requirement.name);
        if (!installed) continue;
        const auto version = Version::parse(installed->version);
        if (version && requirement.allows(*version)) return std::nullopt;
        problems.push_back(fmt::format("{} ({} {} installed)", text, installed->name, installed->version));
    }
    if (problems.empty()) return std::nullopt;
    return fmt::format("{}", fmt::join(problems, " or "));
}

// One GPU's state for `feature`.
GpuFormatState judge_gpu(const FeatureSpec& feature, const Gpu& gpu, const RecipeSet& recipes,
                         const CheckVerdicts& checks) {
    GpuFormatState result;
    result.gpu = gpu.index;
    if (!feature.compute_capability.contains(gpu.compute_capability)) {
        result.state = FormatState::unsupported;
        result.why = fmt::format("needs {}", feature.compute_capability.str());
        return result;
    }
    std::vector<std::string> passed, pending;
    for (const auto& check : feature.checks) {
        const auto verdict = checks.find({gpu.index, check});
        if (verdict != checks.end()) {
            if (verdict->second.state == CheckState::failed) {
                result.state = FormatState::failed;
                result.why = fmt::format("check {} failed: {}", check, verdict->second.summary);
                return result;
            }
            if (verdict->second.state == CheckState::passed) passed.push_back(check);
            continue;
        }
        const auto spec = recipes.checks.find(check);
        if (spec != recipes.checks.end() && spec->second.compute_capability.contains(gpu.compute_capability))
            pending.push_back(check);
    }
    if (!passed.empty()) {
        result.state = FormatState::passed;
        result.why = fmt::format("proven by {}", fmt::join(passed, ", "));
    } else if (!pending.empty()) {
        result.state = FormatState::skipped;
        result.why = fmt::format("{} did not run", fmt::join(pending, ", "));
    } else {
        result.state = FormatState::unverified;
        result.why = feature.checks.empty()
                         ? fmt::format("no bundled check proves {}", feature.name)
                         : fmt::format("none of its checks ({}) runs on this GPU", fmt::join(feature.checks, ", "));
    }
    return result;
}

}  // namespace

std::string_view to_string(FormatState state) {
    switch (state) {
        case FormatState::passed: return "passed";
        case FormatState::skipped: return "skipped";
        case FormatState::unverified: return "unverified";
        case FormatState::unsupported: return "unsupported";
        case FormatState::failed: break;
    }
    return "failed";
}

const std::vector<FormatState>& all_format_states() {
    static const std::vector<FormatState> states = {FormatState::passed, FormatState::skipped, FormatState::unverified,
                                                     FormatState::unsupported, FormatState::failed};
    return states;
}

std::string describe_gpu_briefly(const Gpu& gpu) {
    return fmt::format("GPU {} ({}, {}, compute capability {})", gpu.index, gpu.name, gpu.architecture,
                       gpu.compute_capability.str());
}

std::vector<std::string> unmet_package_gates(const FeatureSpec& feature, const Inventory& inventory,
                                             const PackageIndex& packages) {
    std::vector<std::string> problems;
    for (const auto& gpu : inventory.gpus) {
        for (const auto& gate : feature.package_gates_on({gpu.architecture, gpu.family})) {
            const auto problem = unmet_gate(gate, packages);
            if (!problem) continue;
            const std::string words = fmt::format("{} needs {}", describe_gpu_briefly(gpu), *problem);
            if (std::find(problems.begin(), problems.end(), words) == problems.end()) problems.push_back(words);
        }
    }
    return problems;
}

bool feature_enabled(const FeatureSpec& feature, const Inventory& inventory, const CheckVerdicts& checks,
                     const PackageIndex& packages) {
    if (inventory.gpus.empty()) return false;
    for (const auto& gpu : inventory.gpus) {
        if (!feature.compute_capability.contains(gpu.compute_capability)) return false;
        for (const auto& check : feature.checks) {
            const auto it = checks.find({gpu.index, check});
            if (it != checks.end() && it->second.state == CheckState::failed) return false;
        }
    }
    return unmet_package_gates(feature, inventory, packages).empty();
}

FormatReport judge_format(const FeatureSpec& feature, const Inventory& inventory, const RecipeSet& recipes,
                          const CheckVerdicts& checks, const PackageIndex& packages) {
    FormatReport report;
    report.name = feature.name;
    report.dtype = feature.dtype;
    report.enabled = feature_enabled(feature, inventory, checks, packages);
    report.gate_problems = unmet_package_gates(feature, inventory, packages);
    if (inventory.gpus.empty()) {
        report.state = FormatState::unsupported;
        report.why = "no GPU is visible";
        return report;
    }
    report.state = FormatState::passed;
    for (const auto& gpu : inventory.gpus) {
        GpuFormatState state = judge_gpu(feature, gpu, recipes, checks);
        if (state.state > report.state) {
            report.state = state.state;
            report.limiting_gpu = gpu.index;
            report.why = fmt::format("{}: {}", describe_gpu_briefly(gpu), state.why);
        }
        report.gpus.push_back(std::move(state));
    }
    return report;
}

}  // namespace provision
