#include "network/dma_buf_probe.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "core/shared_library.h"
#include "core/text.h"

namespace provision::network {
namespace {

// libibverbs' functions as opaque pointers: nothing of verbs.h is needed.
struct Verbs {
    void** (*get_device_list)(int*) = nullptr;
    void (*free_device_list)(void**) = nullptr;
    const char* (*get_device_name)(void*) = nullptr;
    void* (*open_device)(void*) = nullptr;
    int (*close_device)(void*) = nullptr;
    void* (*alloc_pd)(void*) = nullptr;
    int (*dealloc_pd)(void*) = nullptr;
    void* (*reg_dmabuf_mr)(void*, std::uint64_t, std::size_t, std::uint64_t, int, int) = nullptr;
    int (*dereg_mr)(void*) = nullptr;
};

}  // namespace

std::string_view to_string(ProbeOutcome outcome) {
    switch (outcome) {
        case ProbeOutcome::supported: return "supported";
        case ProbeOutcome::unsupported: return "unsupported";
        case ProbeOutcome::not_made: break;
    }
    return "not-made";
}

DmaBufProbe probe_dma_buf(const std::string& library_name, const std::string& device_name) {
    DmaBufProbe probe;
    SharedLibrary library(library_name);
    if (!library.loaded()) {
        probe.detail = fmt::format("{} cannot be opened: {}", echoed_path(library_name),
                                   printable(library.error(), 512));
        return probe;
    }
    Verbs verbs;
    const std::string missing = library.resolve({
        Symbol::required(verbs.get_device_list, "ibv_get_device_list"),
        Symbol::required(verbs.free_device_list, "ibv_free_device_list"),
        Symbol::required(verbs.get_device_name, "ibv_get_device_name"),
        Symbol::required(verbs.open_device, "ibv_open_device"),
        Symbol::required(verbs.close_device, "ibv_close_device"),
        Symbol::required(verbs.alloc_pd, "ibv_alloc_pd"),
        Symbol::required(verbs.dealloc_pd, "ibv_dealloc_pd"),
        Symbol::optional(verbs.reg_dmabuf_mr, "ibv_reg_dmabuf_mr"),
        Symbol::required(verbs.dereg_mr, "ibv_dereg_mr"),
    });
    if (!missing.empty()) {
        probe.detail = fmt::format("{} lacks {}", echoed_path(library_name), missing);
        return probe;
    }
    if (!verbs.reg_dmabuf_mr) {
        // rdma-core before 34 has no dma-buf registration: NCCL's wrapper answers EOPNOTSUPP.
        probe.outcome = ProbeOutcome::unsupported;
        probe.detail = fmt::format("{} has no ibv_reg_dmabuf_mr (rdma-core 34 or newer has)",
                                   echoed_path(library_name));
        return probe;
    }
    int count = 0;
    void** devices = verbs.get_device_list(&count);
    if (!devices) {
        probe.detail = fmt::format("ibv_get_device_list: {}", std::strerror(errno));
        return probe;
    }
    void* device = nullptr;
    for (int i = 0; i < count && devices[i]; ++i) {
        const char* name = verbs.get_device_name(devices[i]);
        if (name && device_name == name) device = devices[i];
    }
    if (!device) {
        probe.detail = fmt::format("libibverbs does not list {}", echoed(device_name));
        verbs.free_device_list(devices);
        return probe;
    }
    void* context = verbs.open_device(device);
    if (!context) {
        probe.detail = fmt::format("ibv_open_device({}): {}", echoed(device_name),
                                   std::strerror(errno));
        verbs.free_device_list(devices);
        return probe;
    }
    if (void* pd = verbs.alloc_pd(context)) {
        errno = 0;
        void* region = verbs.reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
        const int error = errno;
        if (region) verbs.dereg_mr(region);  // a library that took fd -1: nothing was meant to be registered
        const bool refused = error == EOPNOTSUPP || error == EPROTONOSUPPORT;
        probe.outcome = refused ? ProbeOutcome::unsupported : ProbeOutcome::supported;
        probe.detail = fmt::format("ibv_reg_dmabuf_mr on {} with no descriptor: {}",
                                   echoed(device_name),
                                   error == 0 ? std::string("accepted") : std::string(std::strerror(error)));
        verbs.dealloc_pd(pd);
    } else {
        probe.detail = fmt::format("ibv_alloc_pd on {}: {}", echoed(device_name),
                                   std::strerror(errno));
    }
    verbs.close_device(context);
    verbs.free_device_list(devices);
    return probe;
}

}  // namespace provision::network
