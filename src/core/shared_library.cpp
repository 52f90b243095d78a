#include "core/shared_library.h"

#include <dlfcn.h>

namespace provision {

SharedLibrary::SharedLibrary(const std::string& name) {
    // RTLD_LOCAL: the driver's symbols must not satisfy anyone else's lookups.
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char* message = dlerror();
        error_ = message ? message : "unknown dlopen error";
    }
}

void* SharedLibrary::raw_symbol(const char* name) const {
    return handle_ ? dlsym(handle_, name) : nullptr;
}

std::string SharedLibrary::resolve(std::initializer_list<Symbol> table) const {
    std::string missing;
    for (const Symbol& symbol : table) {
        void* address = nullptr;
        for (const char* name : symbol.names_)
            if ((address = raw_symbol(name))) break;
        symbol.assign_(symbol.slot_, address);
        if (!address && symbol.required_ && missing.empty()) missing = symbol.names_.back();
    }
    return missing;
}

SharedLibrary::~SharedLibrary() {
    if (handle_ && !keep_loaded_) dlclose(handle_);
}

}  // namespace provision
