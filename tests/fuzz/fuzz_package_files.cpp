// libFuzzer target: RECORD, cpp_lib.json and the extension checks' name classifiers (package_files_target.h).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/package_files_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::package_files::one_input(input); }, data,
                                     size);
}
