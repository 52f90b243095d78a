// Random access to the bytes of a file (or of a buffer, for tests and
// fuzzing), one bounded read at a time: nothing here reads a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/regular_file.h"
#include "native/read_result.h"

namespace provision::native {

// True when [offset, offset + length) lies within [0, size), without overflow.
constexpr bool within(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
    return offset <= size && length <= size - offset;
}

class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual std::uint64_t size() const = 0;
    // Reads exactly `length` bytes at `offset` into `out`; false when the
    // range lies outside the source or the read fails.
    virtual bool read_at(std::uint64_t offset, void* out, std::size_t length) const = 0;
    // Names the source in messages (the path).
    virtual const std::string& name() const = 0;
};

// A regular file read with pread, opened by RegularFile::open (never
// blocking, anything but a regular file refused).  The size is taken once,
// at open: a file that shrinks later gives failed reads.  The descriptor
// stays open while the object lives: hold one at a time.
class FileSource final : public ByteSource {
public:
    static ReadResult<std::shared_ptr<const FileSource>> open(const std::string& path);
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    std::uint64_t size() const override { return file_.size(); }
    bool read_at(std::uint64_t offset, void* out, std::size_t length) const override;
    const std::string& name() const override { return path_; }

private:
    FileSource(RegularFile file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
    RegularFile file_;
    std::string path_;
};

// Bytes held in memory.
class MemorySource final : public ByteSource {
public:
    MemorySource(std::string bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
    std::uint64_t size() const override { return bytes_.size(); }
    bool read_at(std::uint64_t offset, void* out, std::size_t length) const override;
    const std::string& name() const override { return name_; }

private:
    std::string bytes_;
    std::string name_;
};

}  // namespace provision::native
