// What the user asked for in place of provision's choice: a mechanism, a
// dtype, and whether either is used even where it cannot be served.
#pragma once

#include <optional>
#include <string>

namespace provision {

struct UserOverrides {
    std::optional<std::string> attention;  // PROVISION_ATTENTION as written; none for unset, empty or "auto"
    std::optional<std::string> dtype;      // PROVISION_DTYPE as written; none for unset, empty or "auto"
    bool force = false;                    // PROVISION_FORCE
};

}  // namespace provision
