// How the report words what a package's device code carries: shared by the
// torch and the extension judgements.
#pragma once

#include <string>
#include <vector>

#include "native/fatbin.h"

namespace provision {

// "9.0a", "12.0": the capabilities of `targets`, as the report lists them.
std::vector<std::string> capability_list(const std::vector<native::Target>& targets);

// "SASS for 8.0 8.6 9.0 and no PTX".
std::string carried_words(const std::vector<std::string>& sass, const std::vector<std::string>& ptx);

// For --explain: one line per target with the units carrying it
// ("  sm_90: 444 units"), after `heading`.
std::vector<std::string> unit_lines(const std::string& heading, const native::FatbinSummary& code);

// "1 unit", "444 units".
std::string count_words(std::size_t count, const char* one, const char* many);

}  // namespace provision
