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
    std::vector<XidEvent> events; // every Xid line, in order (at most kMostXidEvents)
    bool cut = false;             // more lines than the reader takes (records or events)
};

// What the reader takes at most: records of the log, bytes of one record,
// Xid events kept.  The kernel's ring buffer holds a few MiB: these bound
// the time and memory whatever the log holds.
inline constexpr std::size_t kMostLogRecords = 200000;
inline constexpr std::size_t kLongestLogRecord = 8192;
inline constexpr std::size_t kMostXidEvents = 1000;

// The Xid of one record's text ("6,1234,56789,-;NVRM: Xid (PCI:...): 79, ..."
// or the message alone), or nullopt when it is no Xid line.
std::optional<XidEvent> parse_xid_record(std::string_view record);

// Reads `path` (/dev/kmsg: one record a read, without waiting for new ones;
// a regular file of records one a line stands in for it in tests).
XidLog read_xid_log(const std::string& path);

// Whether the driver's "0000:3b:00" names the GPU at sysfs's "0000:3b:00.0".
bool same_gpu_bus(std::string_view xid_bus_id, std::string_view pci_bus_id);

}  // namespace provision
