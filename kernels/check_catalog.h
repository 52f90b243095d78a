// The bundled checks, in one table: their names, where each can run at all,
// and (through CheckKind) which runner serves each.  The catalog, the
// capability limits, the dispatch and the recipes' [checks] all derive from
// it (recipes naming a check not in it are refused at load time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validation_kernels.h"

namespace provision::kernels {

enum class CheckKind { attention_fp16, attention_bf16, attention_bf16_wgmma, gemm_tf32, gemm_fp8, gemm_fp8_wgmma };

struct CheckEntry {
    CheckKind kind;
    const char* name;     // "attention.fp16", as recipes name it
    int min_capability;   // major * 10 + minor
    int max_capability;   // 1000: no upper bound
    const char* hardware;  // what it needs, for "unsupported" results
};

const std::vector<CheckEntry>& check_table();

// The entry called `name`, or nullptr.
const CheckEntry* find_check(const std::string& name);

namespace detail {

// An error result when `name` is not a known check, else nothing.
std::optional<CheckResult> reject_unknown_check(const std::string& name);

}  // namespace detail
}  // namespace provision::kernels
