// Python distribution names as PEP 503 and PEP 508 define them.
#pragma once

#include <string>
#include <string_view>

namespace provision {

// PEP 503: runs of '-', '_' and '.' become one '-', letters become lower
// case, so `Flash.Attn`, `flash_attn` and `flash-attn` compare equal.
std::string normalize_package_name(std::string_view name);

// PEP 508: ASCII letters and digits, with '-', '_' or '.' only between them.
bool is_valid_package_name(std::string_view name);

}  // namespace provision
