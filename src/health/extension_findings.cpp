#include "health/extension_findings.h"

#include <algorithm>

#include <fmt/format.h>

#include "health/device_code_words.h"
#include "native/demangle.h"
#include "native/driver_compat.h"
#include "native/kernel_support.h"

namespace provision {
namespace {

std::string mechanism_words(const std::vector<std::string>& mechanisms) {
    return fmt::format("{} {}", fmt::join(mechanisms, ", "), mechanisms.size() == 1 ? "is" : "are");
}

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// --explain lists at most this many lines of one kind (missing symbols,
// unreadable files); a RECORD naming a million missing modules must not
// print a million lines.
constexpr std::size_t kMaxListedLines = 20;

// Appends the first kMaxListedLines of `lines` to `details`, then how many
// more there are (of `total`, the full count, which may exceed lines.size()).
void add_limited(std::vector<std::string>& details, const std::vector<std::string>& lines,
                 std::size_t total = 0) {
    total = std::max(total, lines.size());
    for (std::size_t i = 0; i < lines.size() && i < kMaxListedLines; ++i) details.push_back(lines[i]);
    if (total > kMaxListedLines) details.push_back(fmt::format("... and {} more", total - kMaxListedLines));
}

// "2.11" of "2.11.0+cu130": the release an extension must be built for.
std::string release_of(const std::string& version) {
    const auto first = version.find('.');
    if (first == std::string::npos) return version;
    const auto second = version.find_first_of(".+", first + 1);
    return version.substr(0, second);
}

// A package with several modules loads the one built for the GPU's
// architecture (SageAttention's _qattn_sm80, _qattn_sm89, _qattn_sm90):
// each module is decided on its own, and the best decides for the package.
native::KernelSupport best_module(const native::ExtensionFiles& files, ComputeCapability gpu) {
    native::KernelSupport best = native::KernelSupport::no;
    for (const auto& module : files.module_code) {
        const auto runs = native::decide_kernel_support(module.code, gpu).runs;
        if (runs == native::KernelSupport::sass) return runs;
        if (runs == native::KernelSupport::ptx_jit) best = runs;
    }
    return best;
}

// The CUDA a wheel's local version label names: "0.6.18+cu130" -> 13.0,
// "0.3.21+cu128" -> 12.8 (flashinfer-jit-cache, sgl-kernel, vLLM and torch
// wheels name theirs so).  Nullopt without such a label.
std::optional<native::CudaVersion> cuda_of_local_label(const std::string& version) {
    const auto plus = version.find('+');
    if (plus == std::string::npos) return std::nullopt;
    const std::string local = version.substr(plus + 1);
    std::size_t start = 0;
    while (start <= local.size()) {
        const std::size_t end = std::min(local.find_first_of("._-", start), local.size());
        const std::string_view segment(local.data() + start, end - start);
        if (segment.size() == 5 && (segment.starts_with("cu") || segment.starts_with("CU")) &&
            std::all_of(segment.begin() + 2, segment.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return native::CudaVersion{(segment[2] - '0') * 10 + (segment[3] - '0'), segment[4] - '0'};
        start = end + 1;
    }
    return std::nullopt;
}

class Judge {
public:
    Judge(const ExtensionEvidence& evidence, const Inventory& inventory, const HealthPolicy& policy)
        : evidence_(evidence), inventory_(inventory), policy_(policy) {
        auto& package = judgement_.package;
        package.package = evidence.package.name;
        package.version = evidence.package.version;
        if (evidence.xformers && evidence.xformers->cuda) package.cuda = *evidence.xformers->cuda;
    }

    void device_code(const native::ExtensionFiles& files) {
        auto& package = judgement_.package;
        const auto& code = files.device_code;
        if (code.containers == 0) return;  // host code only (or Triton, compiled at run time)
        package.sass = capability_list(native::carried_targets(code, native::CodeKind::sass));
        package.ptx = capability_list(native::carried_targets(code, native::CodeKind::ptx));
        for (auto& line : unit_lines(fmt::format("{} of device code in {}",
                                                 count_words(code.containers, "unit", "units"),
                                                 count_words(files.modules.size(), "module", "modules")),
                                     code))
            package.details.push_back(std::move(line));
        for (const auto& gpu : inventory_.gpus) {
            const auto runs = best_module(files, gpu.compute_capability);
            package.gpus.push_back({gpu.index, runs});
            const std::string who = gpu_with_capability(gpu);
            if (runs == native::KernelSupport::no) {
                reject(gpu.index, gpu.nvml_index, "no_kernel_image", "extension_unusable",
                       fmt::format("{} {} carries {}: {} can run none of it (\"no kernel image is available for "
                                   "execution on the device\"), so {} rejected; install a {} build with sm_{}{} code",
                                   package.package, package.version, carried_words(package.sass, package.ptx), who,
                                   mechanism_words(evidence_.mechanisms), package.package,
                                   gpu.compute_capability.major, gpu.compute_capability.minor),
                       fmt::format("no code for {}: it carries {}", who, carried_words(package.sass, package.ptx)));
            } else if (runs == native::KernelSupport::ptx_jit) {
                needs_jit_ = true;
                add(gpu.index, gpu.nvml_index, "ptx_jit_only", policy_.level("ptx_jit_only"),
                    fmt::format("{} {} carries {}: {} runs it only after the driver compiles the PTX, which slows "
                                "the first start",
                                package.package, package.version, carried_words(package.sass, package.ptx), who));
            }
        }
    }

    void torch_symbols(const native::ExtensionFiles& files, const TorchFiles& torch,
                       native::TorchExports& exports) {
        if (!files.torch_symbols_complete) {
            judgement_.package.details.push_back(fmt::format(
                "torch symbols not checked: its modules need more than {}", native::kMaxTorchSymbols));
            return;
        }
        std::vector<std::string> names;
        names.reserve(files.torch_symbols.size());
        for (const auto& symbol : files.torch_symbols) names.push_back(symbol.name);
        const auto answers = exports.look_up(names);
        std::vector<const native::NeededSymbol*> missing;
        bool unknown = false;
        for (std::size_t i = 0; i < answers.size(); ++i) {
            if (answers[i] == native::ExportAnswer::unknown) unknown = true;
            if (answers[i] == native::ExportAnswer::missing) missing.push_back(&files.torch_symbols[i]);
        }
        if (unknown) {
            // Some library could not answer: what it would have said is
            // unknown, so nothing is called missing.
            if (exports.notes().empty())
                judgement_.package.details.push_back(
                    fmt::format("torch symbols not checked: no library in {} can answer", exports.folder()));
            else
                judgement_.package.details.push_back(
                    fmt::format("torch symbols not checked: {} cannot answer for every library:", exports.folder()));
            add_limited(judgement_.package.details, exports.notes());
            return;
        }
        if (missing.empty()) {
            if (!files.torch_symbols.empty())
                judgement_.package.details.push_back(fmt::format("{} torch symbols needed, all exported by {}",
                                                                 files.torch_symbols.size(), exports.folder()));
            return;
        }
        const auto& first = *missing.front();
        const std::string more =
            missing.size() == 1 ? std::string() : fmt::format(" and {} more torch symbols", missing.size() - 1);
        const auto& package = judgement_.package;
        std::vector<std::string> lines;
        for (const auto* symbol : missing)
            if (lines.size() <= kMaxListedLines)
                lines.push_back(fmt::format("missing from torch {}: {} (needed by {})", torch.build.version,
                                            native::demangle(symbol->name), file_name(symbol->module)));
        add_limited(judgement_.package.details, lines, missing.size());
        reject(-1, -1, "torch_abi_mismatch", "torch_abi_mismatch",
               fmt::format("{} {} needs {}{} that torch {} does not export (\"undefined symbol: {}\" at import): it "
                           "was built for another torch, so {} rejected; install a {} build for torch {}",
                           package.package, package.version, native::demangle(first.name), more, torch.build.version,
                           first.name, mechanism_words(evidence_.mechanisms), package.package,
                           release_of(torch.build.version)),
               fmt::format("built for another torch: needs {}{}, which torch {} does not export",
                           native::demangle(first.name), more, torch.build.version));
    }

    void xformers_build(const native::XformersBuild& build, const TorchFiles* torch) {
        const auto& package = judgement_.package;
        if (torch && build.torch && !build.torch->empty() && *build.torch != torch->build.version)
            reject(-1, -1, "torch_abi_mismatch", "torch_abi_mismatch",
                   fmt::format("{} {} was built for PyTorch {} (cpp_lib.json), but torch {} is installed: it will not "
                               "load its C++/CUDA part (\"xFormers was built for: PyTorch {}\"), so {} rejected; "
                               "install the {} release built for torch {}",
                               package.package, package.version, *build.torch, torch->build.version, *build.torch,
                               mechanism_words(evidence_.mechanisms), package.package, torch->build.version),
                   fmt::format("built for PyTorch {}, not the installed {}", *build.torch, torch->build.version));
        const auto built_with = native::CudaVersion::parse(build.cuda.value_or(""));
        const auto driver_cuda = native::CudaVersion::parse(inventory_.driver.cuda);
        if (!built_with || !driver_cuda || inventory_.gpus.empty()) return;
        const auto compat = native::check_driver(*built_with, *driver_cuda, needs_jit_);
        if (compat.verdict != native::DriverVerdict::driver_too_old) return;
        const std::string needed = needed_driver_words(compat);
        reject(-1, -1, "driver_too_old", "extension_unusable",
               fmt::format("{} {} was built with CUDA {}, but driver {} runs CUDA {} at most, so {} rejected; it "
                           "needs {}",
                           package.package, package.version, built_with->str(), inventory_.driver.version,
                           driver_cuda->str(), mechanism_words(evidence_.mechanisms), needed),
               fmt::format("built with CUDA {}; the driver runs CUDA {} at most", built_with->str(),
                           driver_cuda->str()));
    }

    // A wheel whose version names the CUDA it was built with ("+cu130")
    // cannot run on a driver that runs less, as torch's own CUDA.
    void local_label_cuda() {
        auto& package = judgement_.package;
        const auto built_with = cuda_of_local_label(package.version);
        if (!built_with) return;
        package.cuda = built_with->str();
        const auto driver_cuda = native::CudaVersion::parse(inventory_.driver.cuda);
        if (!driver_cuda || inventory_.gpus.empty()) return;
        const auto compat = native::check_driver(*built_with, *driver_cuda, needs_jit_);
        if (compat.verdict != native::DriverVerdict::driver_too_old) return;
        const std::string needed = needed_driver_words(compat);
        reject(-1, -1, "driver_too_old", "extension_unusable",
               fmt::format("{} {} was built with CUDA {} (its version says so), but driver {} runs CUDA {} at most, "
                           "so {} rejected; it needs {}",
                           package.package, package.version, built_with->str(), inventory_.driver.version,
                           driver_cuda->str(), mechanism_words(evidence_.mechanisms), needed),
               fmt::format("built with CUDA {}; the driver runs CUDA {} at most", built_with->str(),
                           driver_cuda->str()));
    }

    ExtensionJudgement take() { return std::move(judgement_); }

private:
    void add(int gpu, int nvml_index, const char* signal, HealthLevel level, std::string words) {
        judgement_.findings.push_back({gpu, nvml_index, signal, level, std::move(words)});
    }

    // The first cause found is the one its mechanisms' reasons give.
    void reject(int gpu, int nvml_index, const char* signal, const char* policy_key, std::string words,
                std::string why) {
        add(gpu, nvml_index, signal, policy_.level(policy_key), std::move(words));
        if (!judgement_.unusable) judgement_.unusable = std::move(why);
    }

    const ExtensionEvidence& evidence_;
    const Inventory& inventory_;
    const HealthPolicy& policy_;
    ExtensionJudgement judgement_;
    bool needs_jit_ = false;
};

}  // namespace

ExtensionJudgement judge_extension(const ExtensionEvidence& evidence, const TorchFiles* torch,
                                   native::TorchExports* exports, const Inventory& inventory,
                                   const HealthPolicy& policy) {
    Judge judge(evidence, inventory, policy);
    if (!evidence.files || evidence.files->modules.empty()) {
        ExtensionJudgement judgement = judge.take();
        judgement.package.verified = false;
        judgement.package.details.push_back(
            fmt::format("not verified: {}", evidence.files ? std::string("RECORD lists no compiled module")
                                                           : evidence.why_unverified));
        if (evidence.files) add_limited(judgement.package.details, evidence.files->notes, evidence.files->notes_total);
        return judgement;
    }
    const auto& files = *evidence.files;
    if (!inventory.gpus.empty()) judge.device_code(files);
    if (torch && exports) judge.torch_symbols(files, *torch, *exports);
    if (evidence.xformers)
        judge.xformers_build(*evidence.xformers, torch);
    else
        judge.local_label_cuda();
    ExtensionJudgement judgement = judge.take();
    std::vector<std::string> notes;
    add_limited(notes, files.notes, files.notes_total);
    judgement.package.details.insert(judgement.package.details.begin(), notes.begin(), notes.end());
    return judgement;
}

}  // namespace provision
