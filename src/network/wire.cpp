#include "network/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

namespace provision::network {

Socket& Socket::operator=(Socket&& other) noexcept {
    if (this != &other) {
        reset();
        fd_ = other.release();
    }
    return *this;
}

int Socket::release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

void Socket::reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

bool send_all(int fd, std::string_view text, Clock::time_point deadline) {
    while (!text.empty()) {
        const ssize_t sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
        if (sent > 0) {
            text.remove_prefix(static_cast<std::size_t>(sent));
            continue;
        }
        if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        pollfd one{fd, POLLOUT, 0};
        const int ready = ::poll(&one, 1, remaining_ms(deadline));
        if (ready == 0 || (ready < 0 && errno != EINTR)) return false;
    }
    return true;
}

std::optional<std::string> LineReader::take_line(Read& why) {
    const std::size_t end = buffer_.find('\n');
    // The newline counts: a line of kMostLineBytes - 1 characters and its
    // newline is the longest there is.
    if ((end == std::string::npos && buffer_.size() >= kMostLineBytes) ||
        (end != std::string::npos && end + 1 > kMostLineBytes)) {
        why = Read::too_long;
        return std::nullopt;
    }
    if (end == std::string::npos) {
        why = closed_ ? Read::closed : Read::nothing_yet;
        return std::nullopt;
    }
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    why = Read::line;
    return line;
}

LineReader::Read LineReader::next(int fd, std::string& line) {
    Read why = Read::nothing_yet;
    if (auto ready = take_line(why)) {
        line = std::move(*ready);
        return Read::line;
    }
    if (why != Read::nothing_yet) return why;
    char buffer[4096];
    while (!closed_ && buffer_.size() < kMostLineBytes) {
        const ssize_t got = ::recv(fd, buffer, std::min(sizeof buffer, kMostLineBytes - buffer_.size() + 1),
                                   MSG_DONTWAIT);
        if (got == 0) {
            closed_ = true;
            break;
        }
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            closed_ = true;
            if (auto ready = take_line(why)) {
                line = std::move(*ready);
                return Read::line;
            }
            return Read::error;
        }
        buffer_.append(buffer, static_cast<std::size_t>(got));
        if (buffer_.find('\n') != std::string::npos) break;
    }
    if (auto ready = take_line(why)) {
        line = std::move(*ready);
        return Read::line;
    }
    return why;
}

LineReader::Read LineReader::wait(int fd, Clock::time_point deadline, std::string& line) {
    while (true) {
        const Read read = next(fd, line);
        if (read != Read::nothing_yet) return read;
        pollfd one{fd, POLLIN, 0};
        const int ready = ::poll(&one, 1, remaining_ms(deadline));
        if (ready == 0) return Read::nothing_yet;
        if (ready < 0 && errno != EINTR) return Read::error;
    }
}

std::string_view to_string(LineReader::Read read) {
    switch (read) {
        case LineReader::Read::line: return "a line";
        case LineReader::Read::nothing_yet: return "no answer in time";
        case LineReader::Read::closed: return "the connection closed";
        case LineReader::Read::too_long: return "a line longer than 1,024 bytes";
        case LineReader::Read::error: break;
    }
    return "the connection failed";
}

std::vector<std::string_view> words_of(std::string_view line) {
    std::vector<std::string_view> words;
    while (!line.empty()) {
        const std::size_t space = line.find(' ');
        if (space != 0) words.push_back(line.substr(0, space));
        if (space == std::string_view::npos) break;
        line.remove_prefix(space + 1);
    }
    return words;
}

std::optional<std::int64_t> bounded_number(std::string_view text, std::int64_t low, std::int64_t high) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
        return std::nullopt;
    return value;
}

bool is_hex(std::string_view text, std::size_t most) {
    if (text.size() < 2 || text.size() > most || text.size() % 2 != 0) return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string rank_ranges(const std::vector<int>& ascending, std::size_t most) {
    if (ascending.empty()) return "-";
    std::string text;
    for (std::size_t i = 0; i < ascending.size();) {
        std::size_t j = i;
        while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1) ++j;
        const std::string range = j == i ? fmt::format("{}", ascending[i])
                                         : fmt::format("{}-{}", ascending[i], ascending[j]);
        const std::string next = (text.empty() ? "" : ",") + range;
        if (text.size() + next.size() + 1 > most) return text.empty() ? "+" : text + "+";
        text += next;
        i = j + 1;
    }
    return text;
}

std::optional<std::vector<int>> parse_rank_ranges(std::string_view text, int below, std::size_t most_ranks) {
    std::vector<int> ranks;
    if (text == "-") return ranks;
    if (!text.empty() && text.back() == '+') text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    int last = -1;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view range = text.substr(0, comma);
        const std::size_t dash = range.find('-');
        const auto first = bounded_number(range.substr(0, dash), 0, below - 1);
        const auto end = dash == std::string_view::npos ? first : bounded_number(range.substr(dash + 1), 0, below - 1);
        if (!first || !end || *first > *end || *first <= last) return std::nullopt;
        for (std::int64_t rank = *first; rank <= *end && ranks.size() < most_ranks; ++rank)
            ranks.push_back(static_cast<int>(rank));
        last = static_cast<int>(*end);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    }
    return ranks;
}

std::string_view rest_after(std::string_view line, int skip) {
    for (int i = 0; i < skip; ++i) {
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos) return {};
        line.remove_prefix(space + 1);
    }
    return line;
}

}  // namespace provision::network
