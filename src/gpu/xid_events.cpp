#include "gpu/xid_events.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "core/shared_library.h"
#include "gpu/nvml_api.h"

namespace provision {

struct XidWatch::Session {
    SharedLibrary library;
    nvml::InitFn init = nullptr;
    nvml::ShutdownFn shutdown = nullptr;
    nvml::DeviceGetCountFn device_count = nullptr;
    nvml::DeviceGetHandleByIndexFn handle_by_index = nullptr;
    nvml::DeviceGetPciInfoFn pci_info = nullptr;
    nvml::EventSetCreateFn create = nullptr;
    nvml::DeviceRegisterEventsFn register_events = nullptr;
    nvml::EventSetWaitFn wait = nullptr;
    nvml::EventSetFreeFn free = nullptr;
    nvml::EventSet set = nullptr;
    bool initialised = false;
    std::vector<std::pair<nvml::Device, std::string>> buses;  // each registered GPU's, read at registration

    explicit Session(const std::string& name) : library(name) {}
    ~Session() {
        if (set) free(set);
        if (initialised) shutdown();
    }
};

namespace {

// The driver's "0000:3b:00" (domain:bus:device), as the kernel log writes it.
std::string bus_of(const nvml::PciInfo& info) {
    return fmt::format("{:04x}:{:02x}:{:02x}", info.domain & 0xFFFF, info.bus & 0xFF, info.device & 0x1F);
}

}  // namespace

XidWatch::XidWatch(const std::string& nvml_library)
    : since_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count()) {
    auto session = std::make_unique<Session>(nvml_library);
    Session& s = *session;
    if (!s.library.loaded()) {
        why_not_ = fmt::format("NVML ({}) is not available", nvml_library);
        return;
    }
    if (const std::string missing = s.library.resolve({
            Symbol::required(s.init, "nvmlInit_v2"),
            Symbol::required(s.shutdown, "nvmlShutdown"),
            Symbol::required(s.device_count, "nvmlDeviceGetCount_v2"),
            Symbol::required(s.handle_by_index, "nvmlDeviceGetHandleByIndex_v2"),
            Symbol::required(s.pci_info, "nvmlDeviceGetPciInfo_v3"),
            Symbol::required(s.create, "nvmlEventSetCreate"),
            Symbol::required(s.register_events, "nvmlDeviceRegisterEvents"),
            Symbol::required(s.wait, "nvmlEventSetWait_v2"),
            Symbol::required(s.free, "nvmlEventSetFree"),
        });
        !missing.empty()) {
        why_not_ = fmt::format("the driver's NVML lacks {}", missing);
        return;
    }
    if (const auto code = s.init(); code != nvml::SUCCESS) {
        why_not_ = fmt::format("NVML did not start (NVML error {})", static_cast<int>(code));
        return;
    }
    s.initialised = true;
    s.library.keep_loaded();  // as the probe's: NVML is never unloaded
    if (const auto code = s.create(&s.set); code != nvml::SUCCESS) {
        s.set = nullptr;
        why_not_ = fmt::format("NVML made no event set (NVML error {})", static_cast<int>(code));
        return;
    }
    unsigned count = 0;
    if (s.device_count(&count) == nvml::SUCCESS)
        for (unsigned index = 0; index < count; ++index) {
            nvml::Device device = nullptr;
            nvml::PciInfo pci{};
            if (s.handle_by_index(index, &device) == nvml::SUCCESS && s.pci_info(device, &pci) == nvml::SUCCESS &&
                s.register_events(device, nvml::event_type_xid_critical_error, s.set) == nvml::SUCCESS)
                s.buses.emplace_back(device, bus_of(pci));
        }
    if (s.buses.empty()) {
        why_not_ = "no GPU takes Xid events";
        return;
    }
    session_ = std::move(session);
}

XidWatch::~XidWatch() = default;

bool XidWatch::watching() const { return session_ != nullptr; }

void XidWatch::add_events_to(Inventory& inventory) {
    if (!session_) return;
    Session& s = *session_;
    // Without waiting: each call takes what is queued, and a queue that
    // keeps filling is cut at the bound.
    for (std::size_t taken = 0; taken < kMostXidEvents; ++taken) {
        nvml::EventData data{};
        if (s.wait(s.set, &data, 0) != nvml::SUCCESS) break;  // NVML_ERROR_TIMEOUT: none left
        if (data.event_type != nvml::event_type_xid_critical_error) continue;
        const auto bus = std::find_if(s.buses.begin(), s.buses.end(),
                                      [&](const auto& registered) { return registered.first == data.device; });
        if (bus == s.buses.end()) continue;
        XidEvent event{static_cast<int>(std::min<unsigned long long>(data.event_data, 9999)), bus->second,
                       "(an NVML event)"};
        const bool first_of_kind = kinds_.size() < kMostXidKinds && kinds_.emplace(event.bus_id, event.xid).second;
        events_.offer(std::move(event), first_of_kind);
    }
    const std::vector<XidEvent> events = events_.kept();
    for (Gpu& gpu : inventory.gpus) {
        if (gpu.health.xids || gpu.pci_bus_id.empty()) continue;  // the kernel's log was read: it has them
        std::vector<XidEvent>& mine = gpu.health.xids.emplace();
        for (const XidEvent& event : events)
            if (same_gpu_bus(event.bus_id, gpu.pci_bus_id)) mine.push_back(event);
    }
    inventory.xid_events_since = since_;
}

}  // namespace provision
