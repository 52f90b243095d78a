// Readable C++ names for messages: `_ZN3c104cuda9SetDeviceEi` becomes
// `c10::cuda::SetDevice(int)`.
#pragma once

#include <string>
#include <string_view>

namespace provision::native {

// The demangled name, or `mangled` as it is when it is not a C++ name (or
// the demangler refuses it).
std::string demangle(std::string_view mangled);

}  // namespace provision::native
