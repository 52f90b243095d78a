// libFuzzer target: the settings table's decoding (settings_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/settings_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::settings::one_input(input); }, data, size);
}
