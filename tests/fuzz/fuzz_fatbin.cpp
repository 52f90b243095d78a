// libFuzzer target: the ELF, GNU hash and fatbinary readers (fatbin_target.h says what is checked).
#include "fuzz/fatbin_target.h"
#include "fuzz/libfuzzer_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::fatbin::one_input(input); }, data, size);
}
