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
