#include "gpu/xid_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

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

// Feeds each whole record of `fd` to `take`: one record a read() for
// /dev/kmsg, lines for a regular file; a record is cut at
// kLongestLogRecord bytes.  False with `why` when the file cannot be read.
template <typename Take>
bool for_each_record(int fd, bool device, Take take, bool& cut, std::string& why) {
    std::vector<char> buffer(device ? kLongestLogRecord + 1 : 65536);
    std::string line;
    bool overlong = false;
    std::size_t records = 0;
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;        // /dev/kmsg: no record left
            if (errno == EPIPE) continue;      // /dev/kmsg: a record overwritten while reading: the next one
            if (errno == EINVAL && device) {   // a record longer than the buffer: skipped
                cut = true;
                continue;
            }
            why = fmt::format("reading it failed: {}", std::strerror(errno));
            return records > 0;
        }
        if (got == 0) break;
        const std::string_view chunk(buffer.data(), static_cast<std::size_t>(got));
        if (device) {
            take(chunk.substr(0, std::min(chunk.size(), kLongestLogRecord)));
            if (++records >= kMostLogRecords) {
                cut = true;
                break;
            }
            continue;
        }
        for (std::size_t at = 0; at < chunk.size();) {
            const std::size_t end = chunk.find('\n', at);
            const std::string_view part = chunk.substr(at, end == std::string_view::npos ? end : end - at);
            if (!overlong) {
                const std::size_t room = kLongestLogRecord - line.size();
                line.append(part.substr(0, room));
                overlong = part.size() > room;
            }
            if (end == std::string_view::npos) break;
            take(line);
            line.clear();
            overlong = false;
            at = end + 1;
            if (++records >= kMostLogRecords) {
                cut = true;
                return true;
            }
        }
    }
    if (!line.empty()) take(line);
    return true;
}

}  // namespace

std::optional<XidEvent> parse_xid_record(std::string_view record) {
    const std::size_t mark = record.find(kXidMark);
    if (mark == std::string_view::npos) return std::nullopt;
    std::string_view rest = record.substr(mark + kXidMark.size());
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
    const auto take = [&](std::string_view record) {
        if (auto event = parse_xid_record(record)) {
            if (log.events.size() < kMostXidEvents) log.events.push_back(std::move(*event));
            else log.cut = true;
        }
    };
    log.read = for_each_record(fd, S_ISCHR(info.st_mode), take, log.cut, log.why_not);
    ::close(fd);
    return log;
}

bool same_gpu_bus(std::string_view xid_bus_id, std::string_view pci_bus_id) {
    // The driver writes domain:bus:device; sysfs adds the function.
    const std::string xid = lowercase(xid_bus_id);
    const std::string pci = lowercase(pci_bus_id);
    return !xid.empty() && pci.size() >= xid.size() && pci.compare(0, xid.size(), xid) == 0 &&
           (pci.size() == xid.size() || pci[xid.size()] == '.');
}

}  // namespace provision
