// Whether this build lets tests inject faults into validation: the
// PROVISION_TEST_FAULT variable and the worker's --fault option ("crash",
// "killed", "wrong-result", "hang" for a check).  Test builds turn it on
// (CMake option PROVISION_FAULT_INJECTION, on with PROVISION_BUILD_TESTS);
// release builds leave it off, so no variable can make a released worker
// fail on purpose.
#pragma once

namespace provision {

#ifndef PROVISION_FAULT_INJECTION
#define PROVISION_FAULT_INJECTION 0
#endif
inline constexpr bool kFaultInjection = PROVISION_FAULT_INJECTION != 0;

}  // namespace provision
