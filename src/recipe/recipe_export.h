// `provision --print-recipes DIR`: writes the built-in recipes out as files,
// for a user to read or to start a recipe of their own from.
#pragma once

#include <string>
#include <vector>

namespace provision {

// Writes every embedded recipe to FOLDER/<path> (FOLDER and subfolders are
// created).  Never overwrites: when any of those files already exists nothing
// is written and Error(io_failure) lists them.  Each file appears whole or not
// at all (written to a temporary file, then linked into place).  Returns the
// files written, in order.
std::vector<std::string> write_embedded_recipes(const std::string& folder);

}  // namespace provision
