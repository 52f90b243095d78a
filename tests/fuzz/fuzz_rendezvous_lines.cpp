// libFuzzer target: a rendezvous peer's bytes (rendezvous_lines_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/rendezvous_lines_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::rendezvous_lines::one_input(input); }, data,
                                     size);
}
