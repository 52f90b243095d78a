#include "gpu/shared_library.h"

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

SharedLibrary::~SharedLibrary() {
    if (handle_ && !keep_loaded_) dlclose(handle_);
}

}  // namespace provision
