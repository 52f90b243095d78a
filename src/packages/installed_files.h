// The files a distribution installed, as its dist-info RECORD lists them
// (PEP 376 / the wheel spec): one CSV row per file, path first, relative to
// the folder that holds the dist-info folder.
//
// Bounds (docs/DESIGN.md, "Reading what the workload installed"): RECORD is
// read once, at most 16 MiB, and walked in one pass, each byte looked at a
// bounded number of times; no row is kept but the paths asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

// RECORD of a large package (torch) is a few MiB.
constexpr std::size_t kMaxRecordBytes = 16 * 1024 * 1024;
// The most distinct files of one kind taken from one RECORD: real packages
// ship a few compiled modules (torch itself a few hundred).
constexpr std::size_t kMaxRecordFiles = 4096;

// Calls `visit` with the path of each non-empty row of RECORD, in order, as
// written (CSV quoting undone).  One pass: the work is linear in the text.
void for_each_record_path(std::string_view text, const std::function<void(std::string_view path)>& visit);

// The size RECORD gives for `path` (its third field), when a row lists the
// path: nullopt inside when the row gives none ("path,,").  Nullopt when no
// row lists it.  One pass over the text.
std::optional<std::optional<std::uint64_t>> recorded_size(std::string_view text, std::string_view path);

// The paths of RECORD's rows, in order (for_each_record_path, collected).
std::vector<std::string> parse_record(std::string_view text);

// The distinct paths RECORD lists that end in `suffix` or hold `suffix + "."`
// (".so" matches "x.so" and "libx.so.12"), made absolute against the
// dist-info's parent folder, in the order of their first row; a path listed
// again is left out.  Paths that climb out of it ("../../bin/x") are left out:
// they are not the package's modules.  Nullopt, with `error` ("cannot be
// read: WHY", "lists more than 4096 files ending in .so"), when RECORD
// cannot be read (an egg-info has none) or names more than kMaxRecordFiles.
std::optional<std::vector<std::string>> installed_files_ending(const std::string& dist_info, std::string_view suffix,
                                                               std::string& error);

}  // namespace provision
