// libFuzzer target: the network stage's sysfs, /dev and interface readers (network_sysfs_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/network_sysfs_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::network_sysfs::one_input(input); }, data, size);
}
