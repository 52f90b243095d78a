// libFuzzer target: the kernel's log read for Xids (xid_log_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/xid_log_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::xid_log::one_input(input); }, data, size);
}
