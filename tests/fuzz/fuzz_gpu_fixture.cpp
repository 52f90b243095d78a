// libFuzzer target: the GPU fixture reader (gpu_fixture_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/gpu_fixture_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::gpu_fixture::one_input(input); }, data, size);
}
