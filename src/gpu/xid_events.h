// Under --repeat, the Xids the driver raises while provision watches: an
// NVML event set every GPU is registered with once, drained before each
// round's judgement.  NVML delivers only the events that happen after a
// device's registration, so what came before is the kernel's log's to tell
// (xid_log.h); where that log can be read it holds these events too, and
// they are not added twice.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/bounded_keep.h"
#include "gpu/inventory.h"
#include "gpu/xid_log.h"

namespace provision {

class XidWatch {
public:
    // Registers every GPU NVML lists with a set of its own; a watch that
    // could not start says why (why_not()) and adds nothing.
    explicit XidWatch(const std::string& nvml_library);
    ~XidWatch();
    XidWatch(const XidWatch&) = delete;
    XidWatch& operator=(const XidWatch&) = delete;

    bool watching() const;
    const std::string& why_not() const { return why_not_; }
    // When the watch began, in seconds since the epoch.
    std::int64_t since() const { return since_; }

    // Takes the events delivered since the last call (without waiting) and
    // gives each GPU of `inventory` whose kernel log was not read the
    // events of the watch so far, kept by the kernel log's rule (the first
    // of each Xid on each GPU, the newest kMostXidEvents of the rest).
    void add_events_to(Inventory& inventory);

private:
    struct Session;
    std::unique_ptr<Session> session_;
    std::string why_not_;
    std::int64_t since_ = 0;
    BoundedKeep<XidEvent> events_{{kMostXidKinds, kMostXidEvents, KeepEnd::newest}};
    std::set<std::pair<std::string, int>> kinds_;  // (bus, Xid) seen
};

}  // namespace provision
