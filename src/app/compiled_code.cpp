#include "app/compiled_code.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "health/device_code_words.h"
#include "health/extension_findings.h"
#include "native/cuda_compat.h"
#include "native/cudnn_files.h"
#include "native/driver_compat.h"
#include "native/extension_files.h"
#include "native/loader_folders.h"
#include "native/torch_symbols.h"
#include "native/torch_build.h"
#include "packages/installed_files.h"
#include "select/selection.h"

namespace provision {
namespace {

// The packages (normalised name -> the mechanisms needing them) of the
// mechanisms selection may consider on this machine: those of the
// preference order in use (and the one asked for) whose compute-capability
// range holds every visible GPU.  A package only a mechanism out of range
// needs is never imported, so its files are not judged.
PackageNeeds candidate_packages(
    const RecipeSet& recipes, const WorkloadSpec& workload, const Inventory& inventory,
    const std::optional<std::string>& override_mechanism) {
    std::vector<std::string> order;
    if (const auto it = workload.preference.find(preference_key(inventory, workload)); it != workload.preference.end())
        order = it->second;
    if (override_mechanism && std::find(order.begin(), order.end(), *override_mechanism) == order.end())
        order.push_back(*override_mechanism);
    PackageNeeds needed;
    for (const auto& name : order) {
        if (!recipes.mechanisms.count(name)) continue;
        const MechanismSpec mechanism = recipes.mechanism_for(workload, name);
        const bool in_range = std::all_of(inventory.gpus.begin(), inventory.gpus.end(), [&](const Gpu& gpu) {
            return mechanism.compute_capability.contains(gpu.compute_capability);
        });
        if (!in_range) continue;
        add_package_needs(needed, mechanism.packages_on(architectures_of(inventory)), name);
    }
    needed.erase("torch");  // judged on its own, as the run's foundation
    return needed;
}

ExtensionEvidence gather_evidence(const InstalledPackage& package, std::vector<std::string> mechanisms) {
    ExtensionEvidence evidence;
    evidence.package = package;
    evidence.mechanisms = std::move(mechanisms);
    // Shared objects, and the cubins some packages ship beside them
    // (flashinfer-cubin: kernels loaded from .cubin files at run time).
    std::string error;
    auto modules = installed_files_ending(package.location, ".so", error);
    if (modules) {
        if (auto cubins = installed_files_ending(package.location, ".cubin", error))
            modules->insert(modules->end(), cubins->begin(), cubins->end());
        else
            modules.reset();
    }
    if (modules)
        evidence.files = native::read_extension_files(*modules);
    else
        evidence.why_unverified = fmt::format("its RECORD {}", error);
    if (normalize_package_name(package.name) == "xformers") {
        const std::string folder = package.location.substr(0, package.location.rfind('/')) + "/xformers";
        if (auto build = native::read_xformers_build(folder + "/cpp_lib.json")) evidence.xformers = std::move(*build);
    }
    return evidence;
}

// torch loads the CUDA runtime of the nvidia-cuda-runtime wheel it depends
// on; one newer than the driver can run fails torch's start as torch's own
// CUDA version would.
void judge_runtime_wheels(const PackageIndex& packages, const Inventory& inventory, const HealthPolicy& policy,
                          std::vector<Finding>& findings) {
    const auto driver_cuda = native::CudaVersion::parse(inventory.driver.cuda);
    if (!driver_cuda || inventory.gpus.empty()) return;
    for (const char* name : {"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12",
                             "nvidia-cuda-runtime-cu11"}) {
        const InstalledPackage* wheel = packages.find(name);
        if (!wheel) continue;
        const auto built_with = native::CudaVersion::parse(wheel->version);
        if (!built_with) continue;
        const auto compat = native::check_driver(*built_with, *driver_cuda, false);
        if (compat.verdict != native::DriverVerdict::driver_too_old) continue;
        const std::string needed = needed_driver_words(compat);
        findings.push_back({-1, -1, "driver_too_old", policy.level("driver_too_old"),
                            fmt::format("{} {} ({}) is the CUDA runtime torch loads, but driver {} runs CUDA {} at "
                                        "most (\"CUDA driver version is insufficient for CUDA runtime version\"): "
                                        "it needs {}",
                                        wheel->name, wheel->version, wheel->location, inventory.driver.version,
                                        driver_cuda->str(), needed)});
    }
}

}  // namespace

void add_package_needs(PackageNeeds& needs, const std::vector<PackageAlternatives>& alternatives,
                       const std::string& mechanism) {
    for (const auto& group : alternatives)
        for (const auto& text : group.any_of) {
            auto& mechanisms = needs[normalize_package_name(Requirement::parse(text).name)];
            if (std::find(mechanisms.begin(), mechanisms.end(), mechanism) == mechanisms.end())
                mechanisms.push_back(mechanism);
        }
}

CompiledCode judge_compiled_code(const RecipeSet& recipes, const WorkloadSpec& workload, const Inventory& inventory,
                                 const std::optional<TorchFiles>& torch,
                                 const std::optional<std::string>& override_mechanism, PackageIndex& packages) {
    CompiledCode out;
    if (torch) {
        TorchJudgement judgement = judge_torch(*torch, inventory, recipes.policy, recipes.torch_builds);
        out.packages.push_back(std::move(judgement.package));
        out.findings.insert(out.findings.end(), judgement.findings.begin(), judgement.findings.end());
    }
    const bool torch_too_new = std::any_of(out.findings.begin(), out.findings.end(),
                                           [](const Finding& finding) { return finding.signal == "driver_too_old"; });
    if (!torch_too_new) judge_runtime_wheels(packages, inventory, recipes.policy, out.findings);

    std::optional<native::TorchExports> exports;
    if (torch) exports.emplace(torch->folder + "/lib");
    for (const auto& [name, mechanisms] : candidate_packages(recipes, workload, inventory, override_mechanism)) {
        const InstalledPackage* package = packages.find(name);
        if (!package || packages.unusable_reason(name)) continue;  // missing, or already refused
        const ExtensionEvidence evidence = gather_evidence(*package, mechanisms);
        // Pure Python (RECORD lists no module) has nothing to judge or report.
        if (evidence.files && evidence.files->modules.empty() && evidence.files->notes.empty() && !evidence.xformers)
            continue;
        ExtensionJudgement judgement = judge_extension(evidence, torch ? &*torch : nullptr,
                                                       exports ? &*exports : nullptr, inventory, recipes.policy);
        if (judgement.unusable) packages.mark_unusable(name, *judgement.unusable);
        if (!judgement.package.gpus.empty()) packages.mark_device_code_read(name);
        // Host code that needs nothing of torch (Triton's compiler) has nothing to report.
        const bool judged = !judgement.package.verified || !judgement.package.gpus.empty() ||
                            !judgement.findings.empty() || (evidence.files && !evidence.files->torch_symbols.empty()) ||
                            evidence.xformers.has_value();
        if (judged) out.packages.push_back(std::move(judgement.package));
        out.findings.insert(out.findings.end(), judgement.findings.begin(), judgement.findings.end());
    }
    return out;
}

std::optional<CudnnInstall> find_torch_cudnn(const std::optional<TorchFiles>& torch, const PackageIndex& packages,
                                             const std::string& ld_library_path, const std::string& ld_so_conf_dir) {
    // A CPU or ROCm torch loads no cuDNN; torch known only by its dist-info
    // (a simulated tree) has its wheels' word alone.
    if (torch && torch->build.backend != native::TorchBackend::cuda) return std::nullopt;
    auto from_file = [](const native::CudnnFile& file) {
        return CudnnInstall{file.version, fmt::format("the file name {}", file.path.substr(file.path.rfind('/') + 1)),
                            file.path};
    };
    if (torch)
        if (auto bundled = native::find_cudnn_file({torch->folder + "/lib"}); bundled && !bundled->version.empty())
            return from_file(*bundled);
    // The wheels torch's CUDA builds depend on, newest CUDA first.
    for (const char* name : {"nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11", "nvidia-cudnn"})
        if (const InstalledPackage* wheel = packages.find(name))
            return CudnnInstall{wheel->version, fmt::format("{} {}", wheel->name, wheel->version), wheel->location};
    if (!torch) return std::nullopt;
    std::vector<std::string> folders;
    for (const auto& folder :
         native::loader_folders(ld_library_path, ld_so_conf_dir, native::default_loader_folders()).folders)
        folders.push_back(folder.folder);
    if (auto system = native::find_cudnn_file(folders); system && !system->version.empty()) return from_file(*system);
    return std::nullopt;
}

CompatJudgement judge_compat_libraries(const std::string& ld_library_path, const std::string& ld_so_conf_dir,
                                       const Inventory& inventory, const HealthPolicy& policy) {
    CompatJudgement judgement;
    if (inventory.gpus.empty()) return judgement;
    native::CompatScan scan = native::find_cuda_compat_libraries(ld_library_path, ld_so_conf_dir);
    judgement.notes = std::move(scan.notes);
    auto& findings = judgement.findings;
    for (const auto& compat : scan.found) {
        if (compat.libcuda_version == inventory.driver.version) continue;  // the driver's own libcuda: harmless
        findings.push_back(
            {-1, -1, "cuda_compat_libs", policy.level("cuda_compat_libs"),
             fmt::format("{} names {}, CUDA's forward-compatibility libcuda ({}), which the workload loads instead "
                         "of driver {}'s: it works only on data-center GPUs with a driver branch it supports, and "
                         "elsewhere CUDA fails with error 804 (\"forward compatibility was attempted on non "
                         "supported HW\") or 803 (\"system has unsupported display driver / cuda driver "
                         "combination\"); remove it from {} unless this machine needs it",
                         compat.named_by, compat.folder, compat.libcuda_version, inventory.driver.version,
                         compat.named_by)});
    }
    return judgement;
}

}  // namespace provision
