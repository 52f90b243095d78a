// libFuzzer target: a GPU's PCIe link read from sysfs (pcie_link_target.h says what is checked).
#include "fuzz/libfuzzer_entry.h"
#include "fuzz/pcie_link_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return fuzz::run_libfuzzer_input([](std::string_view input) { fuzz::pcie_link::one_input(input); }, data, size);
}
