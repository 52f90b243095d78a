// The rendezvous's wire: sockets that close themselves, lines of at most
// kMostLineBytes read without blocking, the words of a line, bounded numbers,
// and lists of node ranks written as ranges ("2-399,401").  Nothing here
// knows the protocol's verbs (network/rendezvous.h does).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

using Clock = std::chrono::steady_clock;

// The longest line either side sends or accepts, its newline included.
constexpr std::size_t kMostLineBytes = 1024;

class Socket {
public:
    explicit Socket(int fd = -1) : fd_(fd) {}
    ~Socket() { reset(); }
    Socket(Socket&& other) noexcept : fd_(other.release()) {}
    Socket& operator=(Socket&& other) noexcept;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    int fd() const { return fd_; }
    bool open() const { return fd_ >= 0; }
    int release();
    void reset();

private:
    int fd_;
};

// Milliseconds left until `deadline`, 0 once it has passed.
int remaining_ms(Clock::time_point deadline);

// Writes all of `text` before the deadline; false when the peer is gone or
// too slow.
bool send_all(int fd, std::string_view text, Clock::time_point deadline);

// The lines of one connection, read as they come.  A line longer than
// kMostLineBytes (its newline included) ends the connection's use: `broken`.
class LineReader {
public:
    enum class Read { line, nothing_yet, closed, too_long, error };
    // Takes what the socket has without waiting; `line` is the next complete
    // line (without its newline) when the result is `line`.
    Read next(int fd, std::string& line);
    // Waits until a line comes or the deadline passes (nothing_yet).
    Read wait(int fd, Clock::time_point deadline, std::string& line);

private:
    std::optional<std::string> take_line(Read& why);
    std::string buffer_;
    bool closed_ = false;
};

std::string_view to_string(LineReader::Read read);

// The words of a line, split at single spaces (empty words dropped).
std::vector<std::string_view> words_of(std::string_view line);

// A whole decimal number within [low, high]; nullopt for anything else.
std::optional<std::int64_t> bounded_number(std::string_view text, std::int64_t low, std::int64_t high);

// The rest of a line after its first `skip` words.
std::string_view rest_after(std::string_view line, int skip);

// Lowercase hexadecimal digits alone, of an even length from 2 to `most`.
bool is_hex(std::string_view text, std::size_t most);

// Node ranks, ascending and distinct, as ranges: "1,3-5,9"; "-" for none.
// Where the text would pass `most` characters it ends with "+" (more
// follow, not listed).
std::string rank_ranges(const std::vector<int>& ascending, std::size_t most);
// The ranks of such a text, within [0, below), at most `most_ranks` of them;
// nullopt where it is not one.
std::optional<std::vector<int>> parse_rank_ranges(std::string_view text, int below, std::size_t most_ranks);

}  // namespace provision::network
