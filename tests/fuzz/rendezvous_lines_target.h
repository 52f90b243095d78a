// Fuzz target: what a peer of the rendezvous sends (src/network/wire.h), the
// input being the bytes on the connection.  Read through a socket pair by
// the line reader node 0 and every node use, then each line's words through
// the parsers of numbers, hex ids and node-rank ranges.  Beyond "no crash,
// no sanitizer report" it checks that no line passes 1,024 bytes with its
// newline, that the lines read are the input's own, that numbers keep their
// bounds, and that ranges read back are ascending, bounded and written
// again to the same ranks.  The fabric exchange's lines
// (network/fabric_exchange.h) are read too: one that parses is written again
// within a line and reads back the same.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "network/fabric_exchange.h"
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

// A line that parses is written again within one line, and reads back the same.
template <typename Parsed>
std::optional<Parsed> again(const std::string& written, std::optional<Parsed> (*parse)(std::string_view)) {
    FUZZ_CHECK(!written.empty() && written.back() == '\n' && written.size() <= provision::network::kMostLineBytes);
    return parse(std::string_view(written).substr(0, written.size() - 1));
}

inline void check_fabric_lines(std::string_view line) {
    using namespace provision::network;
    constexpr int kNodes = 1 << 20;
    if (const auto clique = parse_clique_line(line)) {
        const auto back = again(format_clique_line(*clique), &parse_clique_line);
        FUZZ_CHECK(back && *back == *clique);
    }
    if (const auto importer = parse_export_line(line, kNodes)) {
        FUZZ_CHECK(*importer >= 0 && *importer < kNodes);
        const std::string written = format_export_line(*importer);
        FUZZ_CHECK(parse_export_line(std::string_view(written).substr(0, written.size() - 1), kNodes) == importer);
    }
    if (const auto handle = parse_handle_line(line)) {
        FUZZ_CHECK(handle->handle.empty() || handle->handle.size() == kFabricHandleDigits);
        const auto back = again(format_handle_line(*handle), &parse_handle_line);
        FUZZ_CHECK(back && back->handle == handle->handle);
    }
    if (const auto import = parse_import_line(line, kNodes)) {
        FUZZ_CHECK(import->handle.size() == kFabricHandleDigits);
        const std::string written = format_import_line(*import);
        FUZZ_CHECK(written.size() <= kMostLineBytes);
        const auto back = parse_import_line(std::string_view(written).substr(0, written.size() - 1), kNodes);
        FUZZ_CHECK(back && back->exporter == import->exporter && back->handle == import->handle);
    }
    if (const auto imported = parse_imported_line(line)) {
        const auto back = again(format_imported_line(*imported), &parse_imported_line);
        FUZZ_CHECK(back && back->outcome == imported->outcome && back->cuda_error == imported->cuda_error);
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
        check_fabric_lines(line);
    }
    FUZZ_CHECK(read != LineReader::Read::nothing_yet || sent < input.size());
    FUZZ_CHECK(input.substr(0, seen.size()) == seen);
    ::close(pair[0]);
    ::close(pair[1]);
}

}  // namespace fuzz::rendezvous_lines
