#include "core/source_ref.h"

#include <fmt/format.h>

namespace provision {

std::string SourceRef::str() const { return fmt::format("{}:{}:{}", file, line, column); }

}  // namespace provision
