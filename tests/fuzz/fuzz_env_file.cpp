// libFuzzer target: the env file writer and its quoting (env_file_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/env_file_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::env_file::one_input(input); }, data, size);
}
