// Reading sysfs as input like any other: an attribute is at most a few
// hundred bytes, opened by RegularFile (a FIFO or a device put where an
// attribute belongs is never read), a folder's entries are counted up to a
// cap, and a link is resolved within the tree it belongs to.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace provision::network {

// The first `max_bytes` of an attribute, blanks and newline trimmed;
// nullopt where it cannot be read.
std::optional<std::string> read_attribute(const std::string& path, std::size_t max_bytes = 256);

// A whole number attribute ("9000", "-1"); nullopt where absent or no number.
std::optional<long long> read_number_attribute(const std::string& path);

struct FolderEntries {
    std::vector<std::string> names;  // in natural order ("mlx5_2" before "mlx5_10")
    std::size_t left_out = 0;        // names listed past the bound, not read
    bool listing_stopped = false;    // more than kMostFolderEntriesListed: the rest not even listed
    bool readable = true;            // the folder could be listed (false: missing, a file, no permission)
    bool truncated() const { return left_out > 0 || listing_stopped; }
};

// The most names of one folder that are listed and sorted before the bound
// applies; past them the listing stops (a folder of sysfs has dozens).
constexpr std::size_t kMostFolderEntriesListed = 65536;

// The names in `folder` ("." and ".." left out), sorted first and then
// kept by core/bounded_keep.h's rule: every name `marked` names (at most
// `max_entries`), and the first `max_entries` of the rest in natural
// order, the order NCCL meets devices and ports in, so that a bound leaves
// out the last ones rather than whichever readdir(3) happened to list first.
FolderEntries list_folder(const std::string& folder, std::size_t max_entries,
                          const std::function<bool(const std::string&)>& marked = {});

// realpath(3) of `path`, made relative to `root` ("/devices/pci0000:00/...");
// nullopt where it cannot be resolved or leads out of `root`.
std::optional<std::string> resolve_within(const std::string& root, const std::string& path);

}  // namespace provision::network
