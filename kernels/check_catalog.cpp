#include "check_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace provision::kernels {

std::vector<std::string> check_names() {
    return {"attention.fp16", "attention.bf16", "attention.bf16.wgmma", "gemm.tf32"};
}

namespace detail {

std::optional<CheckResult> reject_unknown_check(const std::string& name) {
    const auto names = check_names();
    if (std::find(names.begin(), names.end(), name) != names.end()) return std::nullopt;
    CheckResult result;
    result.name = name;
    result.status = CheckStatus::error;
    result.detail = fmt::format("unknown check '{}' (known: {})", name, fmt::join(names, ", "));
    return result;
}

}  // namespace detail
}  // namespace provision::kernels
