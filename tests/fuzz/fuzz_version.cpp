// libFuzzer target: PEP 440 versions, requirement specifiers and PEP 503 names (version_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/version_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::version::one_input(input); }, data, size);
}
