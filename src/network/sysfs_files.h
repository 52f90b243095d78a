// Reading sysfs as input like any other: an attribute is at most a few
// hundred bytes, opened by RegularFile (a FIFO or a device put where an
// attribute belongs is never read), a folder's entries are counted up to a
// cap, and a link is resolved within the tree it belongs to.
#pragma once

#include <cstddef>
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
    std::vector<std::string> names;  // sorted
    bool truncated = false;          // more than `max_entries`: the rest were not read
    bool readable = true;            // the folder could be listed (false: missing, a file, no permission)
};
// The names in `folder` ("." and ".." left out), at most `max_entries`.
FolderEntries list_folder(const std::string& folder, std::size_t max_entries);

// realpath(3) of `path`, made relative to `root` ("/devices/pci0000:00/...");
// nullopt where it cannot be resolved or leads out of `root`.
std::optional<std::string> resolve_within(const std::string& root, const std::string& path);

}  // namespace provision::network
