#include "native/byte_source.h"

#include <cstring>

#include <fmt/format.h>

namespace provision::native {

ReadResult<std::shared_ptr<const FileSource>> FileSource::open(const std::string& path) {
    OpenError error;
    auto file = RegularFile::open(path, error);
    if (!file)
        return ReadError{error.failure == OpenFailure::not_regular_file ? ReadErrorKind::not_regular_file
                                                                       : ReadErrorKind::cannot_open,
                         fmt::format("{}: {}", path, error.why)};
    return std::shared_ptr<const FileSource>(new FileSource(std::move(*file), path));
}

bool FileSource::read_at(std::uint64_t offset, void* out, std::size_t length) const {
    return within(offset, length, size()) && file_.read_at(offset, out, length);
}

bool MemorySource::read_at(std::uint64_t offset, void* out, std::size_t length) const {
    if (!within(offset, length, bytes_.size())) return false;
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return true;
}

}  // namespace provision::native
