// Fault injection for tests, in one place.  Test builds let tests plant
// faults (the CMake option PROVISION_FAULT_INJECTION, on with the tests):
// a check that gives a wrong result or never returns, a worker that
// crashes, a copy that hangs, and the test hooks (PROVISION_TEST_* rows of
// the settings table).  Release builds leave it off: every planted() is
// false at compile time, so the fault branches are not in the kernels'
// machine code, and no variable can make a released worker fail on purpose.
// Plain C++: host code and nvcc's device passes read the same header.
#pragma once

#ifndef PROVISION_FAULT_INJECTION
#error "PROVISION_FAULT_INJECTION is set for every target by the top CMakeLists.txt"
#endif

#ifdef __CUDACC__
#define PROVISION_HOST_DEVICE __host__ __device__
#else
#define PROVISION_HOST_DEVICE
#endif

namespace provision {

inline constexpr bool kFaultInjection = PROVISION_FAULT_INJECTION != 0;

}  // namespace provision

namespace provision::kernels::detail {

// What a kernel is asked to plant: the host hands it to a launcher, and the
// launcher to its kernel as it is.
enum class FaultKind : int {
    none = 0,
    wrong_result = 1,  // the kernel writes a wrong element the check must catch
    hang = 2,          // the kernel never returns; the caller's time limit must end it
};

// Whether `kind` is planted: never where fault injection is built out.
PROVISION_HOST_DEVICE constexpr bool planted(FaultKind fault, FaultKind kind) {
    return kFaultInjection && fault == kind;
}

}  // namespace provision::kernels::detail
