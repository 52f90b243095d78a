#include "select/selection.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/setting_values.h"
#include "core/suggest.h"
#include "core/text.h"

namespace provision {
namespace {

std::string describe_gpu(const Gpu& gpu) {
    return fmt::format("GPU {} ({}, {}, compute capability {})", gpu.index, gpu.name, gpu.architecture,
                       gpu.compute_capability.str());
}

// The first alternative that is installed in an allowed version, or why none is.
std::optional<std::string> unmet_package(const PackageAlternatives& alternatives, const PackageIndex& packages) {
    std::vector<std::string> problems;
    for (const auto& text : alternatives.any_of) {
        const Requirement requirement = Requirement::parse(text);
        const InstalledPackage* installed = packages.find(requirement.name);
        if (!installed) {
            // A metadata folder that was there but did not count is not "not installed".
            const SkippedPackage* skipped = packages.skipped_for(requirement.name);
            problems.push_back(skipped ? fmt::format("{} (not counted: {}: {})", text, skipped->location,
                                                     skipped->reason)
                                       : fmt::format("{} (not installed)", text));
            continue;
        }
        if (const std::string* why = packages.unusable_reason(requirement.name)) {
            problems.push_back(fmt::format("{} ({})", text, *why));
            continue;
        }
        const auto version = Version::parse(installed->version);
        if (!version) {
            problems.push_back(fmt::format("{} (installed version '{}' is not a valid version)", text,
                                           installed->version));
            continue;
        }
        if (requirement.allows(*version)) return std::nullopt;
        problems.push_back(fmt::format("{} ({} {} installed)", text, installed->name, installed->version));
    }
    if (problems.size() == 1) return fmt::format("needs {}", problems.front());
    return fmt::format("needs one of: {}", fmt::join(problems, ", "));
}

std::optional<std::string> unmet_driver(const MechanismSpec& mechanism, const Inventory& inventory,
                                        const PackageIndex& packages) {
    // The strictest of the generic, the per-architecture (or family) and the
    // per-installed-package minimum.
    std::optional<ComputeCapability> needed;  // CUDA versions compare like capabilities
    std::string needed_text;
    std::string because;
    auto consider = [&](const std::string& text, std::string why) {
        const auto version = ComputeCapability::parse(text);
        if (version && (!needed || *needed < *version)) {
            needed = version;
            needed_text = text;
            because = std::move(why);
        }
    };
    if (!mechanism.min_driver_cuda.empty()) consider(mechanism.min_driver_cuda, "");
    for (const auto& gpu : inventory.gpus)
        for (const auto& key : {gpu.architecture, gpu.family}) {
            const auto it = mechanism.min_driver_cuda_for.find(key);
            if (it != mechanism.min_driver_cuda_for.end()) consider(it->second, "");
        }
    for (const auto& [package, version] : mechanism.min_driver_cuda_with)
        if (const InstalledPackage* installed = packages.find(package))
            consider(version, fmt::format(" ({} {} is installed)", installed->name, installed->version));
    if (!needed) return std::nullopt;
    const auto has = ComputeCapability::parse(inventory.driver.cuda);
    if (!has)
        return fmt::format("needs a driver for CUDA {} or newer{}; the driver's CUDA version is unknown", needed_text,
                           because);
    if (*has < *needed)
        return fmt::format("needs a driver for CUDA {} or newer{}; this driver supports CUDA {}", needed_text, because,
                           inventory.driver.cuda);
    return std::nullopt;
}

// Packages that must come from one release (FlashInfer refuses to import
// when flashinfer-cubin's version is not its own).
std::vector<std::string> unmet_same_versions(const MechanismSpec& mechanism, const PackageIndex& packages) {
    std::vector<std::string> reasons;
    for (const auto& [first, second] : mechanism.same_versions) {
        const InstalledPackage* a = packages.find(first);
        const InstalledPackage* b = packages.find(second);
        if (!a || !b) continue;
        const auto version_a = Version::parse(a->version);
        const auto version_b = Version::parse(b->version);
        if (version_a && version_b && *version_a == *version_b) continue;  // local labels aside
        reasons.push_back(fmt::format("needs {} and {} of one release: {} {} is installed with {} {}", a->name,
                                      b->name, a->name, a->version, b->name, b->version));
    }
    return reasons;
}

// The cuDNN torch loads, against the mechanism's least.
std::optional<std::string> unmet_cudnn(const MechanismSpec& mechanism, const PackageIndex& packages) {
    if (mechanism.min_cudnn.empty()) return std::nullopt;
    const auto needed = Version::parse(mechanism.min_cudnn);
    if (!needed) return std::nullopt;  // the loader refuses such a recipe
    const auto& cudnn = packages.cudnn();
    if (!cudnn)
        return fmt::format("needs cuDNN {} or newer; no cuDNN of torch's was found (no nvidia-cudnn wheel, no "
                           "libcudnn.so.MAJOR.MINOR.PATCH beside torch or on the loader's path)",
                           mechanism.min_cudnn);
    const auto has = Version::parse(cudnn->version);
    if (has && !(*has < *needed)) return std::nullopt;
    return fmt::format("needs cuDNN {} or newer; torch loads cuDNN {} ({})", mechanism.min_cudnn, cudnn->version,
                       cudnn->evidence);
}

// The installed package that serves `alternatives` (the first installed one).
const InstalledPackage* serving_package(const PackageAlternatives& alternatives, const PackageIndex& packages) {
    for (const auto& text : alternatives.any_of)
        if (const InstalledPackage* installed = packages.find(Requirement::parse(text).name)) return installed;
    return nullptr;
}

// The recipe's assumed ceiling holds while the device code of some installed
// package of the mechanism (torch aside: it is judged on its own) is unknown.
std::optional<std::string> unmet_assumption(const MechanismSpec& mechanism, const Inventory& inventory,
                                            const PackageIndex& packages) {
    if (!mechanism.assumed_max_compute_capability) return std::nullopt;
    const ComputeCapability ceiling = *mechanism.assumed_max_compute_capability;
    std::vector<std::string> unknown;
    for (const auto& alternatives : mechanism.packages) {
        const InstalledPackage* installed = serving_package(alternatives, packages);
        if (installed && normalize_package_name(installed->name) != "torch" &&
            !packages.device_code_read(installed->name))
            unknown.push_back(installed->name);
    }
    if (unknown.empty()) return std::nullopt;
    for (const auto& gpu : inventory.gpus)
        if (ceiling < gpu.compute_capability)
            return fmt::format("{} is newer than sm_{}{}, the newest this recipe assumes while the device code of {} "
                               "cannot be read",
                               describe_gpu(gpu), ceiling.major, ceiling.minor, fmt::join(unknown, ", "));
    return std::nullopt;
}

// What the GPUs and the driver lack for the mechanism.
std::vector<std::string> hardware_reasons(const MechanismSpec& mechanism, const Inventory& inventory,
                                          const PackageIndex& packages) {
    std::vector<std::string> reasons;
    if (mechanism.requires_gpu) {
        if (inventory.gpus.empty()) {
            reasons.push_back("needs an NVIDIA GPU; none is visible");
        } else {
            for (const auto& gpu : inventory.gpus)
                if (!mechanism.compute_capability.contains(gpu.compute_capability))
                    reasons.push_back(
                        fmt::format("{} is outside {}", describe_gpu(gpu), mechanism.compute_capability.str()));
            if (auto assumed = unmet_assumption(mechanism, inventory, packages)) reasons.push_back(*assumed);
            if (auto driver = unmet_driver(mechanism, inventory, packages)) reasons.push_back(*driver);
        }
    }
    return reasons;
}

// What the installed packages (and the cuDNN torch loads) lack for it.
std::vector<std::string> package_reasons(const MechanismSpec& mechanism, const Inventory& inventory,
                                         const PackageIndex& packages) {
    std::vector<std::string> reasons;
    for (const auto& alternatives : mechanism.packages_on(architectures_of(inventory)))
        if (auto problem = unmet_package(alternatives, packages)) reasons.push_back(*problem);
    for (auto& problem : unmet_same_versions(mechanism, packages)) reasons.push_back(std::move(problem));
    if (auto cudnn = unmet_cudnn(mechanism, packages)) reasons.push_back(*cudnn);
    return reasons;
}

std::vector<std::string> hardware_and_package_reasons(const MechanismSpec& mechanism, const Inventory& inventory,
                                                      const PackageIndex& packages) {
    auto reasons = hardware_reasons(mechanism, inventory, packages);
    auto missing = package_reasons(mechanism, inventory, packages);
    reasons.insert(reasons.end(), missing.begin(), missing.end());
    return reasons;
}

std::vector<std::string> workload_reasons(const WorkloadSpec& workload, const std::string& mechanism) {
    if (workload_accepts(workload, mechanism)) return {};
    return {fmt::format("the '{}' workload cannot use {} (it accepts: {})", workload.name, mechanism,
                        fmt::join(accepted_mechanisms(workload), ", "))};
}

std::vector<std::string> check_reasons(const MechanismSpec& mechanism, const Inventory& inventory,
                                       const CheckVerdicts& checks) {
    std::vector<std::string> reasons;
    for (const auto& check : mechanism.checks) {
        for (const auto& gpu : inventory.gpus) {
            const auto it = checks.find({gpu.index, check});
            if (it == checks.end() || it->second.state != CheckState::failed) continue;
            reasons.push_back(fmt::format("check {} failed on GPU {}: {}", check, gpu.index, it->second.summary));
        }
    }
    return reasons;
}

}  // namespace

std::vector<std::string> accepted_mechanisms(const WorkloadSpec& workload) {
    std::set<std::string> names;
    for (const auto& [architecture, order] : workload.preference) names.insert(order.begin(), order.end());
    for (const auto& [mechanism, flags] : workload.arguments) names.insert(mechanism);
    for (const auto& [mechanism, needs] : workload.mechanism_requirements) names.insert(mechanism);
    return {names.begin(), names.end()};
}

bool workload_accepts(const WorkloadSpec& workload, const std::string& mechanism) {
    const auto names = accepted_mechanisms(workload);
    return std::find(names.begin(), names.end(), mechanism) != names.end();
}

std::optional<Override> read_override(const UserOverrides& user, const std::map<std::string, std::string>& environment,
                                      const WorkloadSpec& workload, const RecipeSet& recipes) {
    std::vector<std::pair<std::string, std::optional<std::string>>> requests{{"PROVISION_ATTENTION", user.attention}};
    for (const auto& variable : workload.override_variables) {
        const auto it = environment.find(variable);
        requests.emplace_back(variable, it == environment.end() ? std::nullopt : std::optional(it->second));
    }
    for (const auto& [variable, text] : requests) {
        if (!text) continue;
        // Blanks around a value are a quoting slip in a pod spec, not part of the name.
        const std::string value = trimmed(*text);
        // "auto" leaves the choice to the next variable, then to provision.
        if (value.empty() || lowercase(value) == "auto") continue;
        const auto canonical = recipes.canonical_mechanism(value);
        if (!canonical) {
            // printable(): the value is echoed into a log line, which it must not break or flood.
            std::string message = fmt::format("{}={}: unknown attention mechanism", variable, echoed(value));
            const std::string hint =
                value.size() <= 64 ? closest_match(value, recipes.mechanism_names()) : std::string();
            if (!hint.empty()) message += fmt::format("; did you mean '{}'?", hint);
            message += fmt::format(" (valid: {}, auto)", fmt::join(recipes.mechanism_names(), ", "));
            throw Error(ExitCode::usage, message);
        }
        Override request;
        request.variable = variable;
        request.value = value;
        request.mechanism = *canonical;
        request.forced = user.force;
        return request;
    }
    return std::nullopt;
}

std::vector<std::string> unmet_requirements(const MechanismSpec& mechanism, const Inventory& inventory,
                                            const PackageIndex& packages, const CheckVerdicts& checks) {
    auto reasons = hardware_and_package_reasons(mechanism, inventory, packages);
    auto failed = check_reasons(mechanism, inventory, checks);
    reasons.insert(reasons.end(), failed.begin(), failed.end());
    return reasons;
}

const Candidate* best_not_served(const Decision& decision) {
    for (const auto& candidate : decision.candidates) {
        if (candidate.mechanism == decision.mechanism) return nullptr;
        if (!candidate.accepted && candidate.hardware_fits) return &candidate;
    }
    return nullptr;
}

std::vector<std::string> architectures_of(const Inventory& inventory) {
    std::vector<std::string> architectures;
    for (const auto& gpu : inventory.gpus) {
        architectures.push_back(gpu.architecture);
        if (!gpu.family.empty() && gpu.family != gpu.architecture) architectures.push_back(gpu.family);
    }
    return architectures;
}

std::string preference_key(const Inventory& inventory, const WorkloadSpec& workload) {
    if (inventory.gpus.empty()) return workload.preference.count("cpu") ? "cpu" : "default";
    const Gpu* weakest = &inventory.gpus.front();
    for (const auto& gpu : inventory.gpus)
        if (gpu.compute_capability < weakest->compute_capability) weakest = &gpu;
    if (workload.preference.count(weakest->architecture)) return weakest->architecture;
    if (!weakest->family.empty() && workload.preference.count(weakest->family)) return weakest->family;
    return "default";
}

Decision select_mechanism(const Inventory& inventory, const RecipeSet& recipes, const WorkloadSpec& workload,
                          const PackageIndex& packages, const std::optional<Override>& override_request,
                          const CheckVerdicts& checks) {
    Decision decision;
    decision.preference_key = preference_key(inventory, workload);
    const auto order_it = workload.preference.find(decision.preference_key);
    if (order_it == workload.preference.end())
        throw Error(ExitCode::invalid_input,
                    fmt::format("workload '{}' has no preference order for '{}' and no 'default' order",
                                echoed(workload.name),
                                echoed(decision.preference_key)));

    std::vector<std::string> order = order_it->second;
    if (override_request && std::find(order.begin(), order.end(), override_request->mechanism) == order.end())
        order.push_back(override_request->mechanism);

    std::string first_without_checks;
    for (const auto& name : order) {
        const MechanismSpec mechanism = recipes.mechanism_for(workload, name);
        Candidate candidate;
        candidate.mechanism = name;
        candidate.reasons = workload_reasons(workload, name);
        auto hardware = hardware_reasons(mechanism, inventory, packages);
        auto missing = package_reasons(mechanism, inventory, packages);
        auto failed = check_reasons(mechanism, inventory, checks);
        candidate.hardware_fits =
            candidate.reasons.empty() && hardware.empty() && failed.empty() && !inventory.gpus.empty();
        candidate.reasons.insert(candidate.reasons.end(), hardware.begin(), hardware.end());
        candidate.reasons.insert(candidate.reasons.end(), missing.begin(), missing.end());
        if (candidate.reasons.empty() && first_without_checks.empty()) first_without_checks = name;
        candidate.reasons.insert(candidate.reasons.end(), failed.begin(), failed.end());
        candidate.accepted = candidate.reasons.empty();
        decision.candidates.push_back(std::move(candidate));
    }

    if (override_request) {
        const auto& wanted = override_request->mechanism;
        const auto it = std::find_if(decision.candidates.begin(), decision.candidates.end(),
                                     [&](const Candidate& c) { return c.mechanism == wanted; });
        const std::string asked = fmt::format("{}={}", override_request->variable, override_request->value);
        if (it->accepted) {
            decision.mechanism = wanted;
            decision.source = DecisionSource::override;
            decision.outcome = DecisionOutcome::chosen;
            decision.reason = fmt::format("requested by {}", asked);
            return decision;
        }
        const std::string why = fmt::format("{}", fmt::join(it->reasons, "; "));
        if (override_request->forced) {
            decision.mechanism = wanted;
            decision.source = DecisionSource::forced;
            decision.outcome = DecisionOutcome::chosen;
            decision.reason = fmt::format("requested by {} and forced by PROVISION_FORCE=1", asked);
            decision.warnings.push_back(fmt::format("{} is forced although: {}", wanted, why));
            return decision;
        }
        // Refused before validation (the workload, the hardware or the
        // packages), or only by a failed check.
        auto hardware = workload_reasons(workload, wanted);
        auto unmet = hardware_and_package_reasons(recipes.mechanism_for(workload, wanted), inventory, packages);
        hardware.insert(hardware.end(), unmet.begin(), unmet.end());
        decision.outcome =
            hardware.empty() ? DecisionOutcome::override_failed_validation : DecisionOutcome::override_refused;
        decision.source = DecisionSource::override;
        decision.reason = fmt::format("{} cannot be served: {} (set PROVISION_FORCE=1 to use it anyway)", asked, why);
        return decision;
    }

    std::vector<std::string> skipped;
    for (const auto& candidate : decision.candidates) {
        if (!candidate.accepted) {
            skipped.push_back(candidate.mechanism);
            continue;
        }
        decision.mechanism = candidate.mechanism;
        decision.outcome = candidate.mechanism != first_without_checks ? DecisionOutcome::fell_back_after_validation
                                                                       : DecisionOutcome::chosen;
        decision.reason = skipped.empty()
                              ? fmt::format("first choice for {} in the '{}' workload's order",
                                            decision.preference_key, workload.name)
                              : fmt::format("first mechanism in the '{}' workload's {} order that this machine "
                                            "can serve (rejected before it: {})",
                                            workload.name, decision.preference_key, fmt::join(skipped, ", "));
        return decision;
    }
    decision.reason = fmt::format("no mechanism in the '{}' workload's {} order can serve this machine",
                                  workload.name, decision.preference_key);
    return decision;
}

}  // namespace provision
