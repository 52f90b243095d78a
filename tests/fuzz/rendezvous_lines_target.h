// Fuzz target: what a peer of the rendezvous sends (src/network/wire.h), the
// input being the bytes on the connection.  Read through a socket pair by
// the line reader node 0 and every node use, then each line's words through
// the parsers of numbers, hex ids and node-rank ranges.  Beyond "no crash,
// no sanitizer report" it checks that no line passes 1,024 bytes with its
// newline, that the lines read are the input's own, that numbers keep their
// bounds, and that ranges read back are ascending, bounded and written
// again to the same ranks.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "network/wire.h"

namespace fuzz::rendezvous_lines {

inline void check_words(std::string_view line) {
    using namespace provision::network;
    for (const std::string_view word : words_of(line)) {
        FUZZ_CHECK(!word.empty() && word.find(' ') == std::string_view::npos);
        if (const auto number = bounded_number(word, -5, 1 << 20)) FUZZ_CHECK(*number >= -5 && *number <= (1 << 20));
        if (is_hex(word, 512)) FUZZ_CHECK(word.size() % 2 == 0 && word.size() <= 512);
        const auto ranks = parse_rank_ranges(word, 1 << 20, 16);
        if (!ranks) continue;
        FUZZ_CHECK(ranks->size() <= 16);
        for (std::size_t i = 0; i < ranks->size(); ++i) {
            FUZZ_CHECK((*ranks)[i] >= 0 && (*ranks)[i] < (1 << 20));
            if (i > 0) FUZZ_CHECK((*ranks)[i] > (*ranks)[i - 1]);
        }
        const std::string again = rank_ranges(*ranks, kMostLineBytes);
        FUZZ_CHECK(again.size() <= kMostLineBytes);
        const auto back = parse_rank_ranges(again, 1 << 20, 16);
        FUZZ_CHECK(back && *back == *ranks);
    }
}

inline void one_input(std::string_view input) {
    using namespace provision::network;
    if (input.size() > 60000) input = input.substr(0, 60000);  // within a socket pair's buffer
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
    const int buffer = 1 << 17;
    ::setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    ::setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    std::size_t sent = 0;
    while (sent < input.size()) {
        const ssize_t wrote = ::send(pair[1], input.data() + sent, input.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (wrote <= 0) break;
        sent += static_cast<std::size_t>(wrote);
    }
    ::shutdown(pair[1], SHUT_WR);
    LineReader reader;
    std::string line, seen;
    LineReader::Read read;
    while ((read = reader.next(pair[0], line)) == LineReader::Read::line) {
        FUZZ_CHECK(line.size() + 1 <= kMostLineBytes);
        FUZZ_CHECK(line.find('\n') == std::string::npos);
        seen += line + "\n";
        check_words(line);
    }
    FUZZ_CHECK(read != LineReader::Read::nothing_yet || sent < input.size());
    FUZZ_CHECK(input.substr(0, seen.size()) == seen);
    ::close(pair[0]);
    ::close(pair[1]);
}

}  // namespace fuzz::rendezvous_lines
