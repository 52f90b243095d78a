// The Xid events the NVIDIA driver wrote to the kernel's log since boot
// ("NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus."),
// read from /dev/kmsg, which a privileged container (a DaemonSet) can read.
// Xids before an NVML event set was registered are never delivered as
// events (nvmlDeviceRegisterEvents), so this log is where health tools read
// a node's past (Azure/azurehpc-health-checks, customTests/azure_gpu_xid.nhc).
// Where the log cannot be read the answer is "not read", never "none".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

struct XidEvent {
    int xid = 0;
    std::string bus_id;   // "0000:3b:00" as the driver writes it (domain:bus:device)
    std::string message;  // the driver's words after the Xid, cut
};

struct XidLog {
    bool read = false;            // the log could be read
    std::string why_not;          // when not read
    // The Xid events kept, in order: the first of each Xid on each GPU (at
    // most kMostXidKinds) and the newest kMostXidEvents of the rest
    // (core/bounded_keep.h), so a long log never hides a GPU's Xid 79.
    std::vector<XidEvent> events;
    std::size_t events_left_out = 0;  // Xid events read but not kept
    std::size_t bytes_not_read = 0;   // a stand-in file's oldest bytes, past kMostLogBytes
    bool stopped = false;             // /dev/kmsg: kMostLogRecords read and more still coming
    std::size_t records_cut = 0;      // records longer than kLongestLogRecord
};

// What the reader takes at most: records of /dev/kmsg, bytes of a file
// standing in for it (its newest), bytes of one record, Xid events kept.
// The kernel's ring buffer holds at most 32 MiB (CONFIG_LOG_BUF_SHIFT 25) of
// records of 32 bytes on average (printk_ringbuffer's PRB_AVGBITS): the
// first two bounds hold the largest log a kernel keeps, and stop a log
// written faster than it is read.
inline constexpr std::size_t kMostLogRecords = std::size_t{1} << 20;
inline constexpr std::size_t kMostLogBytes = std::size_t{32} << 20;
inline constexpr std::size_t kLongestLogRecord = 8192;
inline constexpr std::size_t kMostXidEvents = 1000;
inline constexpr std::size_t kMostXidKinds = 1000;

// The Xid of one record, or nullopt when it is no Xid line.  A record is
// /dev/kmsg's "prio,seq,ts,flags[,...];message" (Documentation/ABI/testing/
// dev-kmsg) or, in a stand-in file, the message alone.  The message must
// begin with the driver's own "NVRM: Xid (": the same words elsewhere (a
// file name the kernel quotes, a USB product string) are someone else's.
// A record with a prefix must be the kernel's (facility 0): what a process
// writes to /dev/kmsg is given facility LOG_USER or above.
std::optional<XidEvent> parse_xid_record(std::string_view record);

// Reads `path` (/dev/kmsg: one record a read, without waiting for new ones;
// a regular file of records one a line stands in for it in tests).
XidLog read_xid_log(const std::string& path);

// What the log's bounds left out, in words for the report; "" when nothing.
std::string xid_log_cut_note(const XidLog& log);

// Whether the driver's "0000:3b:00" names the GPU at sysfs's "0000:3b:00.0".
bool same_gpu_bus(std::string_view xid_bus_id, std::string_view pci_bus_id);

}  // namespace provision
