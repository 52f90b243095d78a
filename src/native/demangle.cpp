#include "native/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace provision::native {

std::string demangle(std::string_view mangled) {
    const std::string name(mangled);
    if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                    std::free);
    if (status != 0 || !readable) return name;
    return readable.get();
}

}  // namespace provision::native
