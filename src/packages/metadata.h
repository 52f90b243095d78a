// The header block of a distribution's METADATA (or PKG-INFO) file: RFC 822
// style "Key: value" lines, ended by the first blank line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace provision {

struct MetadataHeaders {
    std::optional<std::string> metadata_version;
    std::optional<std::string> name;
    std::optional<std::string> version;
};

// Reads the headers up to the first blank line; the body (the long
// description) is never looked at.  Keys compare without regard to case,
// values are trimmed, folded continuation lines are joined with a space,
// CRLF line ends are accepted and the first occurrence of a key wins.
// Lines that are not headers are ignored: this never fails.
MetadataHeaders parse_metadata_headers(std::string_view text);

// The first bytes of `text` up to and including the first blank line, or
// all of it when it has none: what parse_metadata_headers() looks at.
std::string_view metadata_header_block(std::string_view text);

// The bytes of `path` up to and including the first blank line (or the
// whole file when it has none, at most 1 MiB), read in a few large chunks.
// nullopt with `error` set when the file cannot be read.
std::optional<std::string> read_metadata_header_block(const std::string& path, std::string& error);

}  // namespace provision
