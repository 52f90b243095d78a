// The outcome of reading a user-controlled file: a value, or an error that
// says what was wrong.  Malformed input is an answer here, never an
// exception, a crash or undefined behaviour.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace provision::native {

enum class ReadErrorKind {
    cannot_open,       // missing, no permission, ...
    not_regular_file,  // a FIFO, device, socket or folder: never read
    io_error,          // a read failed or came back short
    not_elf,           // no ELF magic
    unsupported,       // ELF, but not 64-bit little-endian
    malformed,         // an offset, size or count that the file cannot hold
};

struct ReadError {
    ReadErrorKind kind = ReadErrorKind::malformed;
    std::string message;  // names the file and what was wrong
};

template <typename T>
class ReadResult {
public:
    ReadResult(T value) : state_(std::move(value)) {}
    ReadResult(ReadError error) : state_(std::move(error)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() { return std::get<0>(state_); }
    const T& value() const { return std::get<0>(state_); }
    T& operator*() { return value(); }
    const T& operator*() const { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const ReadError& error() const { return std::get<1>(state_); }

private:
    std::variant<T, ReadError> state_;
};

}  // namespace provision::native
