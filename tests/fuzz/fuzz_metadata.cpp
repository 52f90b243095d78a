// libFuzzer target: the METADATA / PKG-INFO header reader, from memory and
// through a file.  Checks that only the header block is looked at, that
// values are single trimmed lines, and that the chunked file reader returns
// exactly the header block of what was written.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <sys/mman.h>
#include <unistd.h>

#include "packages/metadata.h"

using provision::MetadataHeaders;

namespace {

void check(bool condition) {
    if (!condition) std::abort();  // libFuzzer reports it with the input
}

void check_value(const std::optional<std::string>& value) {
    if (!value) return;
    check(value->find('\n') == std::string::npos);
    if (value->empty()) return;
    for (char edge : {value->front(), value->back()}) check(edge != ' ' && edge != '\t' && edge != '\r');
}

bool same(const MetadataHeaders& a, const MetadataHeaders& b) {
    return a.name == b.name && a.version == b.version && a.metadata_version == b.metadata_version;
}

// The file reader sees what was written; a memfd keeps the disk out of it.
void check_file_reader(std::string_view text) {
    static const int fd = memfd_create("fuzz-metadata", MFD_CLOEXEC);
    if (fd < 0) return;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
        return;
    std::string error;
    const auto block = provision::read_metadata_header_block("/proc/self/fd/" + std::to_string(fd), error);
    check(block.has_value());
    check(*block == provision::metadata_header_block(text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const MetadataHeaders headers = provision::parse_metadata_headers(text);
    check_value(headers.name);
    check_value(headers.version);
    check_value(headers.metadata_version);

    const std::string_view block = provision::metadata_header_block(text);
    check(text.starts_with(block));
    check(same(provision::parse_metadata_headers(block), headers));
    // Whatever follows the header block is never read as headers.
    if (block.size() < text.size() || block.ends_with("\n\n") || block.ends_with("\n\r\n"))
        check(same(provision::parse_metadata_headers(std::string(block) + "Name: body\nVersion: 0\n"), headers));

    check_file_reader(text);
    return 0;
}
