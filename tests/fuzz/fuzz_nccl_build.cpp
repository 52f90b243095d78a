// libFuzzer target: NCCL's build string in a library (nccl_build_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/nccl_build_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::nccl_build::one_input(input); }, data, size);
}
