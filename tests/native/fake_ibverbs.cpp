// A stand-in for libibverbs.so.1: the few functions NCCL's dma-buf probe
// calls (NVIDIA/nccl src/transport/net_ib/gdr.cc), answering from the
// environment so tests choose what a NIC's driver would say:
//   FAKE_IBVERBS_DEVICES       comma-separated device names (default "mlx5_0")
//   FAKE_IBVERBS_DMABUF_ERRNO  what ibv_reg_dmabuf_mr sets errno to:
//                              EOPNOTSUPP, EPROTONOSUPPORT, EBADF (default)
//   FAKE_IBVERBS_NO_OPEN       set: ibv_open_device fails (EACCES)
// Pointers are opaque to the caller; the calls it made are counted in
// FAKE_IBVERBS_LOG, a file, one name a line, when that is set.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Device {
    std::string name;
};

std::vector<Device>& devices() {
    static std::vector<Device> list;
    return list;
}

void log_call(const char* name) {
    if (const char* path = std::getenv("FAKE_IBVERBS_LOG")) {
        if (FILE* file = std::fopen(path, "a")) {
            std::fprintf(file, "%s\n", name);
            std::fclose(file);
        }
    }
}

int dmabuf_errno() {
    const char* text = std::getenv("FAKE_IBVERBS_DMABUF_ERRNO");
    if (!text) return EBADF;
    if (std::strcmp(text, "EOPNOTSUPP") == 0) return EOPNOTSUPP;
    if (std::strcmp(text, "EPROTONOSUPPORT") == 0) return EPROTONOSUPPORT;
    return EBADF;
}

int context_token, pd_token;

}  // namespace

extern "C" {

void** ibv_get_device_list(int* count) {
    log_call("ibv_get_device_list");
    auto& list = devices();
    list.clear();
    const char* names = std::getenv("FAKE_IBVERBS_DEVICES");
    std::string text = names ? names : "mlx5_0";
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = text.find(',', start);
        const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!name.empty()) list.push_back({name});
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    auto** array = static_cast<void**>(std::calloc(list.size() + 1, sizeof(void*)));
    for (std::size_t i = 0; i < list.size(); ++i) array[i] = &list[i];
    if (count) *count = static_cast<int>(list.size());
    return array;
}

void ibv_free_device_list(void** list) { std::free(list); }

const char* ibv_get_device_name(void* device) { return static_cast<Device*>(device)->name.c_str(); }

void* ibv_open_device(void*) {
    log_call("ibv_open_device");
    if (std::getenv("FAKE_IBVERBS_NO_OPEN")) {
        errno = EACCES;
        return nullptr;
    }
    return &context_token;
}

int ibv_close_device(void*) {
    log_call("ibv_close_device");
    return 0;
}

void* ibv_alloc_pd(void*) {
    log_call("ibv_alloc_pd");
    return &pd_token;
}

int ibv_dealloc_pd(void*) {
    log_call("ibv_dealloc_pd");
    return 0;
}

void* ibv_reg_dmabuf_mr(void*, std::uint64_t, std::size_t, std::uint64_t, int fd, int) {
    log_call("ibv_reg_dmabuf_mr");
    errno = fd < 0 ? dmabuf_errno() : EINVAL;
    return nullptr;
}

int ibv_dereg_mr(void*) { return 0; }

}  // extern "C"
