#include "native/kernel_support.h"

#include <algorithm>

namespace provision::native {

namespace {

std::size_t units_with_code(const FatbinSummary& summary) {
    std::size_t units = 0;
    for (const TargetSet& set : summary.target_sets)
        if (!set.targets.empty()) units += set.containers;
    return units;
}

bool enough(std::size_t part, std::size_t whole, double min_share) {
    return whole > 0 && static_cast<double>(part) >= min_share * static_cast<double>(whole);
}

}  // namespace

std::string_view to_string(KernelSupport support) {
    switch (support) {
        case KernelSupport::sass: return "sass";
        case KernelSupport::ptx_jit: return "ptx-jit";
        case KernelSupport::no: return "no";
    }
    return "no";
}

bool runs_on(const Target& target, ComputeCapability gpu) {
    const ComputeCapability built{target.major(), target.minor()};
    switch (target.variant) {
        case ArchVariant::arch_specific:  // sm_90a / compute_90a: that capability alone
            return gpu == built;
        case ArchVariant::family:  // sm_100f: 10.0 and 10.3, not 11.0 or 12.0
            return gpu.major == built.major && gpu.minor >= built.minor;
        case ArchVariant::plain:
            if (target.kind == CodeKind::ptx) return gpu >= built;  // JIT for any newer GPU
            return gpu.major == built.major && gpu.minor >= built.minor;
    }
    return false;
}

KernelDecision decide_kernel_support(const FatbinSummary& summary, ComputeCapability gpu, double min_share) {
    KernelDecision decision;
    decision.units = units_with_code(summary);
    for (const TargetSet& set : summary.target_sets) {
        bool by_sass = false;
        bool by_ptx = false;
        for (const Target& target : set.targets) {
            if (!runs_on(target, gpu)) continue;
            (target.kind == CodeKind::sass ? by_sass : by_ptx) = true;
        }
        if (by_sass) decision.units_by_sass += set.containers;
        if (by_sass || by_ptx) decision.units_runnable += set.containers;
    }
    if (enough(decision.units_by_sass, decision.units, min_share)) decision.runs = KernelSupport::sass;
    else if (enough(decision.units_runnable, decision.units, min_share)) decision.runs = KernelSupport::ptx_jit;
    else decision.runs = KernelSupport::no;
    return decision;
}

std::vector<Target> carried_targets(const FatbinSummary& summary, CodeKind kind, double min_share) {
    const std::size_t units = units_with_code(summary);
    std::vector<Target> carried;
    for (const auto& [target, count] : summary.containers_with)
        if (target.kind == kind && enough(count, units, min_share)) carried.push_back(target);
    return carried;  // std::map keeps them in order
}

}  // namespace provision::native
