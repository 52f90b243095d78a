// Fuzz target: the METADATA / PKG-INFO header reader, from memory and
// through a file.  Checks that only the header block is looked at, that
// values are single trimmed lines, and that the chunked file reader returns
// exactly the header block of what was written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "packages/metadata.h"

namespace fuzz::metadata {

using provision::MetadataHeaders;

inline void check_value(const std::optional<std::string>& value) {
    if (!value) return;
    FUZZ_CHECK(value->find('\n') == std::string::npos);
    if (value->empty()) return;
    for (char edge : {value->front(), value->back()}) FUZZ_CHECK(edge != ' ' && edge != '\t' && edge != '\r');
}

inline bool same(const MetadataHeaders& a, const MetadataHeaders& b) {
    return a.name == b.name && a.version == b.version && a.metadata_version == b.metadata_version;
}

// The file reader sees what was written.
inline void check_file_reader(std::string_view text) {
    static MemoryFile file("fuzz-metadata");
    std::string error;
    const auto block = provision::read_metadata_header_block(file.hold(text), error);
    FUZZ_CHECK(block.has_value());
    FUZZ_CHECK(*block == provision::metadata_header_block(text));
}

inline void one_input(std::string_view text) {
    const MetadataHeaders headers = provision::parse_metadata_headers(text);
    check_value(headers.name);
    check_value(headers.version);
    check_value(headers.metadata_version);

    const std::string_view block = provision::metadata_header_block(text);
    FUZZ_CHECK(text.starts_with(block));
    FUZZ_CHECK(same(provision::parse_metadata_headers(block), headers));
    // Whatever follows the header block is never read as headers.
    if (block.size() < text.size() || block.ends_with("\n\n") || block.ends_with("\n\r\n"))
        FUZZ_CHECK(same(provision::parse_metadata_headers(std::string(block) + "Name: body\nVersion: 0\n"), headers));

    check_file_reader(text);
}

}  // namespace fuzz::metadata
