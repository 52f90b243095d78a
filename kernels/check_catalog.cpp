#include "check_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace provision::kernels {

const std::vector<CheckEntry>& check_table() {
    static const std::vector<CheckEntry> table = {
        {CheckKind::attention_fp16, "attention.fp16", 75, 1000, "fp16 tensor cores through mma.sync (sm_75 or newer)"},
        {CheckKind::attention_bf16, "attention.bf16", 80, 1000, "bf16 tensor cores through mma.sync (sm_80 or newer)"},
        {CheckKind::attention_bf16_wgmma, "attention.bf16.wgmma", 90, 90,
         "Hopper's warpgroup matrix instructions (sm_90)"},
        {CheckKind::gemm_tf32, "gemm.tf32", 80, 1000, "TF32 tensor cores (sm_80 or newer)"},
        // One mma.sync kernel for every fp8 GPU (the instruction is not an
        // arch-specific one), and apart from it the wgmma path that Hopper's
        // fast fp8 libraries take: a GPU can fail one and pass the other.
        {CheckKind::gemm_fp8, "gemm.fp8", 89, 1000, "fp8 tensor cores through mma.sync (sm_89 or newer)"},
        {CheckKind::gemm_fp8_wgmma, "gemm.fp8.wgmma", 90, 90,
         "Hopper's warpgroup fp8 matrix instructions (sm_90)"},
    };
    return table;
}

const CheckEntry* find_check(const std::string& name) {
    for (const auto& entry : check_table())
        if (name == entry.name) return &entry;
    return nullptr;
}

std::vector<std::string> check_names() {
    std::vector<std::string> names;
    for (const auto& entry : check_table()) names.emplace_back(entry.name);
    return names;
}

namespace detail {

std::optional<CheckResult> reject_unknown_check(const std::string& name) {
    if (find_check(name)) return std::nullopt;
    CheckResult result;
    result.name = name;
    result.status = CheckStatus::error;
    result.detail = fmt::format("unknown check '{}' (known: {})", name, fmt::join(check_names(), ", "));
    return result;
}

}  // namespace detail
}  // namespace provision::kernels
