// "Did you mean ...?" for unknown keys and names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace provision {

std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a small edit distance, or "" when none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace provision
