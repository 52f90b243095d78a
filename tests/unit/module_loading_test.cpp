#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include "worker/module_loading.h"

using namespace provision;

namespace {

// CUDA_MODULE_LOADING in a child process after `change` ran there ("-":
// unset), so that the test process's own environment stays as it was.
bool child_sees(const std::function<void()>& change, const char* expected) {
    const pid_t child = fork();
    if (child == 0) {
        change();
        const char* value = std::getenv("CUDA_MODULE_LOADING");
        _exit(std::strcmp(value ? value : "-", expected) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("the quick checks load their kernels with the context, the other modes as the driver does") {
    CHECK(module_loading_for(ValidateMode::quick) == ModuleLoading::eager);
    CHECK(module_loading_for(ValidateMode::full) == ModuleLoading::driver_default);
    CHECK(module_loading_for(ValidateMode::off) == ModuleLoading::driver_default);
}

TEST_CASE("eager loading is set for the process; the driver's default leaves the environment as it was") {
    CHECK(child_sees([] { unsetenv("CUDA_MODULE_LOADING"); use_module_loading(ModuleLoading::eager); }, "EAGER"));
    CHECK(child_sees([] { setenv("CUDA_MODULE_LOADING", "LAZY", 1); use_module_loading(ModuleLoading::eager); }, "EAGER"));
    CHECK(child_sees([] { unsetenv("CUDA_MODULE_LOADING"); use_module_loading(ModuleLoading::driver_default); }, "-"));
    CHECK(child_sees([] { setenv("CUDA_MODULE_LOADING", "LAZY", 1); use_module_loading(ModuleLoading::driver_default); },
                     "LAZY"));
}
