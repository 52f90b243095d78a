// Whether a GPU can run the device code of a library, decided from the
// targets its fatbinary carries (NVIDIA's CUDA Compatibility guide: SASS for
// sm_XY runs on X.Z with Z >= Y, "a" targets on exactly X.Y, "f" targets on
// the family; PTX for compute_XY is JIT-compiled for X.Y and newer).
//
// The rule: a library is a set of translation units (fatbinary containers),
// each with its own target list.  A GPU runs a unit by SASS when one of the
// unit's SASS targets runs on it, by JIT when only its PTX does.  The GPU
// runs the library by SASS when at least `min_share` (default half) of the
// units that carry any device code have SASS for it; else by PTX JIT when at
// least that share has SASS or PTX it can use; else not at all.  A few units
// built for one special target (torch 2.11+cu130 has 444 units, one of them
// also for sm_89, four for sm_90a) decide nothing: what the bulk carries does.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/compute_capability.h"
#include "native/fatbin.h"

namespace provision::native {

enum class KernelSupport { sass, ptx_jit, no };

// "sass", "ptx-jit", "no": the report's words.
std::string_view to_string(KernelSupport support);

constexpr double default_min_share = 0.5;

struct KernelDecision {
    KernelSupport runs = KernelSupport::no;
    std::size_t units = 0;           // units with any SASS or PTX (0: no device code, nothing to decide)
    std::size_t units_by_sass = 0;   // units with SASS this GPU runs
    std::size_t units_runnable = 0;  // units with SASS or PTX this GPU can use
};

// Whether code for `target` runs on a GPU of capability `gpu`: SASS as it is,
// PTX after JIT compilation (which needs a driver that knows its PTX version:
// driver_compat's business).
bool runs_on(const Target& target, ComputeCapability gpu);

KernelDecision decide_kernel_support(const FatbinSummary& summary, ComputeCapability gpu,
                                     double min_share = default_min_share);

// The targets of `kind` that at least `min_share` of the units carry, in
// order: the library's architectures for the report ("sass": ["7.5", ...]).
std::vector<Target> carried_targets(const FatbinSummary& summary, CodeKind kind, double min_share = default_min_share);

}  // namespace provision::native
