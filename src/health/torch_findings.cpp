#include "health/torch_findings.h"

#include <fmt/format.h>

#include "health/device_code_words.h"
#include "health/torch_fix.h"
#include "native/driver_compat.h"

namespace provision {

TorchJudgement judge_torch(const TorchFiles& files, const Inventory& inventory, const HealthPolicy& policy,
                           const std::map<std::string, TorchBuildSpec>& builds) {
    const std::string fix = torch_fix_words(builds, inventory);
    const std::string or_fix = fix.empty() ? std::string() : fmt::format("; {}", fix);
    TorchJudgement judgement;
    NativePackageReport& package = judgement.package;
    package.package = "torch";
    package.version = files.build.version;
    package.cuda = files.build.cuda.value_or("");
    package.details = files.notes;
    package.verified = files.build.backend != native::TorchBackend::cuda || files.device_code.has_value();
    auto add = [&](int gpu, int nvml_index, const char* signal, std::string words) {
        judgement.findings.push_back({gpu, nvml_index, signal, policy.level(signal), std::move(words)});
    };
    if (inventory.gpus.empty()) return judgement;

    if (files.build.backend != native::TorchBackend::cuda) {
        add(-1, -1, "torch_cpu_build",
            fmt::format("torch {} in {} is a {} build: it cannot use the {} NVIDIA GPU{} here and the workload "
                        "would run on the CPU; install a CUDA build of torch",
                        files.build.version, files.folder, native::to_string(files.build.backend),
                        inventory.gpus.size(), inventory.gpus.size() == 1 ? "" : "s"));
        return judgement;
    }

    bool any_jit = false;
    if (files.device_code) {
        const auto& code = *files.device_code;
        package.sass = capability_list(native::carried_targets(code, native::CodeKind::sass));
        package.ptx = capability_list(native::carried_targets(code, native::CodeKind::ptx));
        for (auto& line : unit_lines(fmt::format("{}: {} of device code", files.library,
                                                 count_words(code.containers, "unit", "units")),
                                     code))
            package.details.push_back(std::move(line));
        for (const auto& gpu : inventory.gpus) {
            const auto decision = native::decide_kernel_support(code, gpu.compute_capability);
            if (decision.units == 0) continue;  // no device code to judge
            package.gpus.push_back({gpu.index, decision.runs});
            if (decision.runs == native::KernelSupport::no) {
                add(gpu.index, gpu.nvml_index, "no_kernel_image",
                    fmt::format("torch {} carries {}: {} can run none of it (\"no kernel image is available for "
                                "execution on the device\"); install a torch build whose wheel carries sm_{}{}{}",
                                files.build.version, carried_words(package.sass, package.ptx), gpu_with_capability(gpu),
                                gpu.compute_capability.major, gpu.compute_capability.minor, or_fix));
            } else if (decision.runs == native::KernelSupport::ptx_jit) {
                any_jit = true;
                add(gpu.index, gpu.nvml_index, "ptx_jit_only",
                    fmt::format("torch {} carries {}: {} runs it only after the driver compiles the PTX, which "
                                "takes minutes at the first start",
                                files.build.version, carried_words(package.sass, package.ptx), gpu_with_capability(gpu)));
            }
        }
    }

    const auto built_with = native::CudaVersion::parse(package.cuda);
    const auto driver_cuda = native::CudaVersion::parse(inventory.driver.cuda);
    if (built_with && driver_cuda) {
        const auto compat = native::check_driver(*built_with, *driver_cuda, any_jit);
        if (compat.verdict == native::DriverVerdict::driver_too_old) {
            const std::string needed = needed_driver_words(compat);
            add(-1, -1, "driver_too_old",
                fmt::format("torch {} was built with CUDA {}, but driver {} runs CUDA {} at most (\"CUDA driver "
                            "version is insufficient for CUDA runtime version\"): it needs {}, or a torch built "
                            "for CUDA {}{}",
                            files.build.version, built_with->str(), inventory.driver.version, driver_cuda->str(),
                            needed, driver_cuda->str(), or_fix));
        }
    }
    return judgement;
}

}  // namespace provision
