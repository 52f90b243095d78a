// libFuzzer target: NVML's fabric info structs and /proc/devices (fabric_readers_target.h says what is checked).
#include "fuzz/fabric_readers_target.h"
#include "fuzz/libfuzzer_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::fabric_readers::one_input(input); }, data, size);
}
