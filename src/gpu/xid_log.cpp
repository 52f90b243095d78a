#include "gpu/xid_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/bounded_keep.h"
#include "core/text.h"

namespace provision {
namespace {

constexpr std::string_view kXidMark = "NVRM: Xid (";

bool is_bus_text(std::string_view text) {
    if (text.empty() || text.size() > 16) return false;
    for (const char c : text)
        if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
    return true;
}

// Whether `text` is a whole decimal number, within `most`.
std::optional<unsigned long> decimal(std::string_view text, unsigned long most) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    unsigned long value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + static_cast<unsigned long>(c - '0');
        if (value > most) return std::nullopt;
    }
    return value;
}

enum class RecordSource { kernel, not_kernel, no_prefix };

// Splits /dev/kmsg's "prio,seq,ts,flags[,more];" off `record`: the message
// is what follows.  Facility 0 (prio below 8) is the kernel's own printk.
RecordSource split_record(std::string_view record, std::string_view& message) {
    message = record;
    if (record.empty() || record[0] < '0' || record[0] > '9') return RecordSource::no_prefix;
    const std::size_t semicolon = record.substr(0, 128).find(';');
    if (semicolon == std::string_view::npos) return RecordSource::no_prefix;
    std::string_view fields = record.substr(0, semicolon);
    std::string_view parts[3];
    for (auto& part : parts) {
        const std::size_t comma = fields.find(',');
        if (comma == std::string_view::npos) return RecordSource::no_prefix;
        part = fields.substr(0, comma);
        fields.remove_prefix(comma + 1);
    }
    const auto prio = decimal(parts[0], 1UL << 30);
    if (!prio || !decimal(parts[1], ~0UL) || !decimal(parts[2], ~0UL)) return RecordSource::no_prefix;
    message = record.substr(semicolon + 1);
    return *prio < 8 ? RecordSource::kernel : RecordSource::not_kernel;
}

// Feeds each whole record of `fd` to `take`: one record a read() for
// /dev/kmsg, lines for a regular file (of which only the newest
// kMostLogBytes are read); a record is cut at kLongestLogRecord bytes.
// False with `why` when the file cannot be read.
template <typename Take>
bool for_each_record(int fd, bool device, std::size_t size, Take take, XidLog& log) {
    std::vector<char> buffer(device ? kLongestLogRecord + 1 : 65536);
    std::string line;
    bool overlong = false;
    bool skipping = false;  // the partial first line of a file read from its middle
    std::size_t records = 0;
    if (!device && size > kMostLogBytes) {
        if (::lseek(fd, static_cast<off_t>(size - kMostLogBytes), SEEK_SET) < 0) {
            log.why_not = fmt::format("seeking in it failed: {}", std::strerror(errno));
            return false;
        }
        log.bytes_not_read = size - kMostLogBytes;
        skipping = true;
    }
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;        // /dev/kmsg: no record left
            if (errno == EPIPE) continue;      // /dev/kmsg: a record overwritten while reading: the next one
            if (errno == EINVAL && device) {   // a record longer than the buffer: skipped
                ++log.records_cut;
                continue;
            }
            log.why_not = fmt::format("reading it failed: {}", std::strerror(errno));
            return records > 0;
        }
        if (got == 0) break;
        const std::string_view chunk(buffer.data(), static_cast<std::size_t>(got));
        if (device) {
            if (chunk.size() > kLongestLogRecord) ++log.records_cut;
            take(chunk.substr(0, std::min(chunk.size(), kLongestLogRecord)));
            if (++records >= kMostLogRecords) {
                log.stopped = true;
                break;
            }
            continue;
        }
        for (std::size_t at = 0; at < chunk.size();) {
            const std::size_t end = chunk.find('\n', at);
            const std::string_view part = chunk.substr(at, end == std::string_view::npos ? end : end - at);
            if (skipping) {
                log.bytes_not_read += part.size() + (end == std::string_view::npos ? 0 : 1);
                if (end == std::string_view::npos) break;
                skipping = false;
                at = end + 1;
                continue;
            }
            if (!overlong) {
                const std::size_t room = kLongestLogRecord - line.size();
                line.append(part.substr(0, room));
                overlong = part.size() > room;
            }
            if (end == std::string_view::npos) break;
            if (overlong) ++log.records_cut;
            take(line);
            line.clear();
            overlong = false;
            at = end + 1;
            ++records;
        }
    }
    if (overlong) ++log.records_cut;
    if (!line.empty()) take(line);
    return true;
}

}  // namespace

std::optional<XidEvent> parse_xid_record(std::string_view record) {
    std::string_view message;
    if (split_record(record, message) == RecordSource::not_kernel) return std::nullopt;
    if (!message.starts_with(kXidMark)) return std::nullopt;
    std::string_view rest = message.substr(kXidMark.size());
    rest = rest.substr(0, rest.find('\n'));  // dev_printk's " KEY=value" lines follow the text
    const std::size_t close = rest.substr(0, 32).find("): ");
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view bus = rest.substr(0, close);
    if (bus.starts_with("PCI:")) bus.remove_prefix(4);
    if (!is_bus_text(bus)) return std::nullopt;
    rest.remove_prefix(close + 3);
    int xid = 0;
    std::size_t digits = 0;
    while (digits < rest.size() && digits < 5 && std::isdigit(static_cast<unsigned char>(rest[digits])))
        xid = xid * 10 + (rest[digits++] - '0');
    if (digits == 0 || digits == 5 || (digits < rest.size() && rest[digits] != ',')) return std::nullopt;
    rest.remove_prefix(digits);
    if (rest.starts_with(",")) rest.remove_prefix(1);
    return XidEvent{xid, lowercase(bus), printable(trimmed(rest), 160)};
}

XidLog read_xid_log(const std::string& path) {
    XidLog log;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        log.why_not = fmt::format("{} cannot be read: {}", path, std::strerror(errno));
        return log;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !(S_ISCHR(info.st_mode) || S_ISREG(info.st_mode))) {
        ::close(fd);
        log.why_not = fmt::format("{} is not the kernel's log", path);
        return log;
    }
    // The first Xid of each kind on each GPU is what a judgement needs;
    // the newest of the rest tell the GPU's recent past.
    BoundedKeep<XidEvent> keep({kMostXidKinds, kMostXidEvents, KeepEnd::newest});
    std::set<std::pair<std::string, int>> kinds;
    const auto take = [&](std::string_view record) {
        auto event = parse_xid_record(record);
        if (!event) return;
        const bool first_of_kind = kinds.size() < kMostXidKinds && kinds.emplace(event->bus_id, event->xid).second;
        keep.offer(std::move(*event), first_of_kind);
    };
    const std::size_t size = S_ISREG(info.st_mode) ? static_cast<std::size_t>(info.st_size) : 0;
    log.read = for_each_record(fd, S_ISCHR(info.st_mode), size, take, log);
    ::close(fd);
    log.events = keep.take();
    log.events_left_out = keep.left_out();
    return log;
}

std::string xid_log_cut_note(const XidLog& log) {
    std::vector<std::string> cuts;
    if (log.events_left_out > 0)
        cuts.push_back(fmt::format("{} of its Xid events were left out (kept: the first of each Xid on each GPU, "
                                   "and the newest {} of the rest)",
                                   log.events_left_out, kMostXidEvents));
    if (log.bytes_not_read > 0)
        cuts.push_back(fmt::format("its oldest {} bytes were not read (the newest {} MiB were)", log.bytes_not_read,
                                   kMostLogBytes >> 20));
    if (log.stopped)
        cuts.push_back(fmt::format("reading stopped after {} records, with more still coming", kMostLogRecords));
    if (log.records_cut > 0)
        cuts.push_back(fmt::format("{} records longer than {} bytes were cut", log.records_cut, kLongestLogRecord));
    if (cuts.empty()) return "";
    return fmt::format("the kernel's log was cut: {}", fmt::join(cuts, "; "));
}

bool same_gpu_bus(std::string_view xid_bus_id, std::string_view pci_bus_id) {
    // The driver writes domain:bus:device; sysfs adds the function.
    const std::string xid = lowercase(xid_bus_id);
    const std::string pci = lowercase(pci_bus_id);
    return !xid.empty() && pci.size() >= xid.size() && pci.compare(0, xid.size(), xid) == 0 &&
           (pci.size() == xid.size() || pci[xid.size()] == '.');
}

}  // namespace provision
