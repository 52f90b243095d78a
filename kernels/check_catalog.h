// The check names, in one place for the CUDA build and the stub.
#pragma once

#include <optional>
#include <string>

#include "validation_kernels.h"

namespace provision::kernels::detail {

// An error result when `name` is not a known check, else nothing.
std::optional<CheckResult> reject_unknown_check(const std::string& name);

}  // namespace provision::kernels::detail
