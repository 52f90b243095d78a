// Which number formats each visible GPU runs: a recipe feature marked
// number_format (bf16, fp8, ...) judged per GPU from its compute-capability
// range and its checks' verdicts, and for the pod as the worst of its GPUs.
// Also whether each feature (number formats and settings such as TF32) is
// on, its package gates included.  Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/inventory.h"
#include "packages/python_packages.h"
#include "recipe/recipe.h"
#include "select/selection.h"

namespace provision {

// From best to worst: the order in which the worst GPU decides the pod's
// state.
enum class FormatState {
    passed,       // a check of the format passed on the GPU, none failed
    skipped,      // in range, but its checks did not run (validation off, simulated, no kernels)
    unverified,   // in range, and no bundled check can prove it on this GPU
    unsupported,  // the GPU is outside the format's range (or there is no GPU)
    failed,       // a check of the format failed on the GPU
};

// "passed", "skipped", ... as docs/DESIGN.md lists them.
std::string_view to_string(FormatState state);
// Every state, best first.
const std::vector<FormatState>& all_format_states();

struct GpuFormatState {
    int gpu = 0;             // GPU index as the report shows it
    FormatState state = FormatState::unsupported;
    std::string why;         // "needs sm_80 or newer", "check gemm.fp8 failed: ...", "passed gemm.fp8"
};

struct FormatReport {
    std::string name;        // "bf16"
    std::string dtype;       // "bfloat16"; empty for formats without one (fp8)
    FormatState state = FormatState::unsupported;  // the worst over the visible GPUs
    int limiting_gpu = -1;   // the first GPU in that state when it is not passed; -1: none
    std::string why{};       // what limits it, for people (empty when every GPU passed)
    std::vector<GpuFormatState> gpus{};
    std::vector<std::string> gate_problems{};  // package gates that do not hold
    bool enabled = false;    // its env_enabled settings apply
};

// The state of `feature` on each visible GPU and for the pod.
FormatReport judge_format(const FeatureSpec& feature, const Inventory& inventory, const RecipeSet& recipes,
                          const CheckVerdicts& checks, const PackageIndex& packages);

// The package gates of `feature` that do not hold on these GPUs, in words;
// a gated package that is not installed gates nothing.
std::vector<std::string> unmet_package_gates(const FeatureSpec& feature, const Inventory& inventory,
                                             const PackageIndex& packages);

// Whether a feature is on: a GPU is visible, every visible GPU is in its
// range, none of its checks failed and its package gates hold.
bool feature_enabled(const FeatureSpec& feature, const Inventory& inventory, const CheckVerdicts& checks,
                     const PackageIndex& packages);

// "GPU 1 (Tesla T4, turing, compute capability 7.5)"
std::string describe_gpu_briefly(const Gpu& gpu);

}  // namespace provision
