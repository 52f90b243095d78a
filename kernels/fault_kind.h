// Test-only fault injection, set from CheckOptions::fault: the host hands it
// to a launcher, and the launcher to its kernel as it is.  Plain C++, no CUDA
// header: host code and nvcc's device passes read the same enum.
#pragma once

namespace provision::kernels::detail {

enum class FaultKind : int {
    none = 0,
    wrong_result = 1,  // the kernel writes a wrong element the check must catch
    hang = 2,          // the kernel never returns; the caller's time limit must end it
};

}  // namespace provision::kernels::detail
