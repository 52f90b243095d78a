#include "worker/module_loading.h"

#include <cstdlib>

namespace provision {

ModuleLoading module_loading_for(ValidateMode mode) {
    return mode == ValidateMode::quick ? ModuleLoading::eager : ModuleLoading::driver_default;
}

void use_module_loading(ModuleLoading loading) {
    if (loading == ModuleLoading::eager) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
}

}  // namespace provision
