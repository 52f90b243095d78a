// Fuzz target: the kernel's log as the Xid reader takes it (src/gpu/xid_log.h),
// a file of records one a line standing in for /dev/kmsg.  The input is the
// log; each of its lines is also parsed alone.  Beyond "no crash, no
// sanitizer report" it checks that the reader keeps its bounds, that every
// event it gives is one the record parser gives for some line, and that an
// event's fields are what the report may print: a short Xid, a bus id of hex
// digits, colons and dots, a message without control bytes; that an event
// comes only from a record whose message begins with the driver's mark, in
// a record of the kernel's own; and that no kind of Xid on a GPU is lost to
// the bound on events kept.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <set>
#include <system_error>
#include <utility>

#include "fuzz/fuzz_support.h"
#include "gpu/xid_log.h"

namespace fuzz::xid_log {

// A log file of this process's own, removed when the process ends.
class LogFile {
public:
    LogFile()
        : path_(std::filesystem::temp_directory_path() / ("provision-fuzz-kmsg-" + std::to_string(::getpid()))) {}
    ~LogFile() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    LogFile(const LogFile&) = delete;
    LogFile& operator=(const LogFile&) = delete;

    std::string write(std::string_view text) const {
        std::ofstream(path_, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
        return path_.string();
    }

private:
    std::filesystem::path path_;
};

inline void check_event(const provision::XidEvent& event) {
    FUZZ_CHECK(event.xid >= 0 && event.xid <= 9999);
    FUZZ_CHECK(!event.bus_id.empty() && event.bus_id.size() <= 16);
    for (const char c : event.bus_id)
        FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.');
    FUZZ_CHECK(event.message.size() <= 4 * 160 + 8);
    for (const char c : event.message) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
}

// An event comes only from a record whose message begins with the driver's
// mark: the record itself, or what follows the first ';' of a kmsg prefix.
inline void check_source(std::string_view record) {
    constexpr std::string_view mark = "NVRM: Xid (";
    const std::size_t semicolon = record.find(';');
    if (record.starts_with(mark)) return;
    FUZZ_CHECK(semicolon != std::string_view::npos && record.substr(semicolon + 1).starts_with(mark));
    // The prefix's priority is the kernel's (facility 0): below 8.
    const std::string_view prio = record.substr(0, record.find(','));
    FUZZ_CHECK(!prio.empty() && prio.find_first_not_of('0') >= prio.size() - 1 && prio.back() >= '0' &&
               prio.back() <= '7');
}

inline void one_input(std::string_view input) {
    static const LogFile log_file;
    std::size_t parsed = 0;
    std::set<std::pair<std::string, int>> kinds;
    for (std::size_t at = 0; at <= input.size();) {
        const std::size_t end = std::min(input.find('\n', at), input.size());
        const std::string_view record = input.substr(at, end - at);
        if (const auto event = provision::parse_xid_record(record)) {
            check_event(*event);
            check_source(record);
            kinds.emplace(event->bus_id, event->xid);
            ++parsed;
        }
        at = end + 1;
    }
    const provision::XidLog log = provision::read_xid_log(log_file.write(input));
    FUZZ_CHECK(log.read);
    FUZZ_CHECK(log.events.size() <= provision::kMostXidEvents + provision::kMostXidKinds);
    for (const auto& event : log.events) check_event(event);
    if (log.records_cut > 0 || log.bytes_not_read > 0) return;
    // Lines within the record bound are read whole: every event parsed alone is
    // kept or counted, and every kind of Xid on every GPU is among those kept.
    FUZZ_CHECK(log.events.size() + log.events_left_out == parsed);
    for (const auto& kind : kinds)
        FUZZ_CHECK(std::any_of(log.events.begin(), log.events.end(), [&](const provision::XidEvent& e) {
            return e.bus_id == kind.first && e.xid == kind.second;
        }));
}

}  // namespace fuzz::xid_log
