// The files a distribution installed, as its dist-info RECORD lists them
// (PEP 376 / the wheel spec): one CSV row per file, path first, relative to
// the folder that holds the dist-info folder.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

// The paths of RECORD's rows, in order, as written (CSV quoting undone).
std::vector<std::string> parse_record(std::string_view text);

// The paths RECORD lists that end in `suffix` or hold `suffix + "."`
// (".so" matches "x.so" and "libx.so.12"), made absolute against the
// dist-info's parent folder.  Paths that climb out of it ("../../bin/x")
// are left out: they are not the package's modules.  Nullopt, with `error`,
// when RECORD cannot be read (an egg-info has none).
std::optional<std::vector<std::string>> installed_files_ending(const std::string& dist_info, std::string_view suffix,
                                                               std::string& error);

}  // namespace provision
