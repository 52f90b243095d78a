// The real GPU's backend: the kernels' checks, and the link checks of
// cuda/ on the CUDA runtime.  A build without a CUDA toolkit has the
// kernels' stand-in (every check unsupported, no GPU opened) and no link
// checks: each answers that the build has none.
#include <fmt/format.h>

#include <mutex>
#include <new>

#include "gpu/pcie_sysfs.h"
#include "worker/cuda/link_checks.h"
#include "worker/cuda/nccl_check.h"
#include "worker/gpu_backend.h"
#include "worker/nccl_log.h"

#ifndef PROVISION_HAVE_CUDA
#error "PROVISION_HAVE_CUDA is set for src/worker by the top CMakeLists.txt"
#endif

namespace provision {
namespace {

inline constexpr bool kCudaBuilt = PROVISION_HAVE_CUDA != 0;
constexpr const char* kNoToolkit = "provision was built without a CUDA toolkit";

PulledLine pulled_line(int from, PeerPath path, const links::PeerPull& pull) {
    PulledLine line;
    line.from = from;
    line.path = path;
    line.gb_per_s = pull.gb_per_s;
    line.detail = pull.detail;
    switch (pull.status) {
        case links::PeerPullStatus::passed: line.status = PeerCopyStatus::passed; break;
        case links::PeerPullStatus::wrong_bytes: line.status = PeerCopyStatus::wrong_bytes; break;
        case links::PeerPullStatus::no_peer_access:
            line.status = PeerCopyStatus::skipped;
            line.no_peer_access = true;
            break;
        case links::PeerPullStatus::path_failed:
            line.status = PeerCopyStatus::error;
            line.path_failed = true;
            break;
        case links::PeerPullStatus::error: line.status = PeerCopyStatus::error; break;
    }
    return line;
}

class HostLink final : public PreparedLink {
public:
    HostLink(std::unique_ptr<links::HostLinkCheck> check, int repeats, std::string pci_bus_id)
        : check_(std::move(check)), repeats_(repeats), pci_bus_id_(std::move(pci_bus_id)) {}
    std::string finish() override {
        const auto measure = check_->run(repeats_);
        HostLinkLine line{measure.ok, measure.h2d_gb_per_s, measure.d2h_gb_per_s, {}, measure.detail};
        if (measure.ok) line.link = read_pcie_link(pci_bus_id_);  // while the link is still busy
        return format_host_link_line(line);
    }

private:
    std::unique_ptr<links::HostLinkCheck> check_;
    int repeats_;
    std::string pci_bus_id_;
};

class Pull final : public PreparedLink {
public:
    Pull(std::unique_ptr<links::PeerPullCheck> check, const LinkCommand& command)
        : check_(std::move(check)), command_(command) {}
    std::string finish() override {
        return format_pulled_line(pulled_line(command_.gpu, command_.path, check_->run(command_.repeats)));
    }

private:
    std::unique_ptr<links::PeerPullCheck> check_;
    LinkCommand command_;
};

// All ranks join once their checks are done: nothing to prepare.
class AllReduce final : public PreparedLink {
public:
    AllReduce(int cuda_device, const LinkCommand& command) : device_(cuda_device), command_(command) {}
    std::string finish() override {
        NcclLogFile::turn_on();  // before NCCL is loaded in this process, if the id was not made here
        const auto run = links::run_nccl_all_reduce(device_, command_.library, command_.ranks, command_.gpu,
                                                    command_.handle, command_.bytes, command_.repeats);
        return format_nccl_line({run.ok, run.init_ms, run.ms, run.bus_gb_per_s, run.detail,
                                 transport_summary(read_nccl_log(NcclLogFile::read()))});
    }

private:
    int device_;
    LinkCommand command_;
};

class CudaBackend final : public GpuBackend {
public:
    explicit CudaBackend(int cuda_device) : device_(cuda_device) {}

    kernels::OpenedDevice open() override {
        kernels::OpenedDevice device = kernels::open_device(device_);
        pci_bus_id_ = device.pci_bus_id;
        return device;
    }

    std::unique_ptr<kernels::PreparedCheck> prepare_check(const std::string& name,
                                                          const kernels::CheckOptions& options) override {
        return kernels::prepare_check(name, options);
    }

    ExportedLine export_buffer(const LinkCommand& command) override {
        if constexpr (kCudaBuilt) {
            const auto exported = links::export_peer_buffer(device_, command.gpu, command.bytes, command.path);
            return {exported.ok, command.path, exported.handle, exported.detail};
        }
        return {false, command.path, {}, kNoToolkit};
    }

    HostMemoryLine host_memory() override {
        if constexpr (kCudaBuilt) {
            const auto check = links::check_host_numa_memory(device_);
            return {check.ok, check.numa_node, check.detail};
        }
        return {false, -1, kNoToolkit};
    }

    FabricHandleLine fabric_handle() override {
        if constexpr (kCudaBuilt) {
            const auto check = links::check_fabric_handle(device_);
            return {check.status, check.cuda_error, check.detail};
        }
        return {FabricHandleStatus::not_measured, 0, kNoToolkit};  // nothing ran: no setting may follow
    }

    NcclIdLine nccl_id(const LinkCommand& command) override {
        if constexpr (kCudaBuilt) {
            NcclLogFile::turn_on();  // before this process first loads NCCL
            const auto made = links::make_nccl_unique_id(command.library);
            return {made.ok, made.id, made.detail};
        }
        return {false, {}, kNoToolkit};
    }

    void stage_host_link(std::size_t bytes) override {
        if constexpr (kCudaBuilt) {
            try {
                auto memory = std::make_unique<links::HostMemory>(bytes);
                std::lock_guard lock(staged_mutex_);
                staged_ = std::move(memory);
            } catch (const std::bad_alloc&) {
                // prepare_host_link tries again, and reports it.
            }
        }
    }

    std::unique_ptr<PreparedLink> prepare_host_link(const LinkCommand& command, const std::string&) override {
        if constexpr (kCudaBuilt) {
            std::unique_ptr<links::HostMemory> memory;
            {
                std::lock_guard lock(staged_mutex_);
                if (staged_ && staged_->bytes() == command.bytes) memory = std::move(staged_);
            }
            try {
                if (!memory) memory = std::make_unique<links::HostMemory>(command.bytes);
            } catch (const std::bad_alloc&) {
                return std::make_unique<AnsweredLink>(format_host_link_line(
                    {false, 0, 0, {}, fmt::format("{} bytes of host memory could not be allocated", command.bytes)}));
            }
            return std::make_unique<HostLink>(links::prepare_host_link(device_, std::move(memory)), command.repeats,
                                              pci_bus_id_);
        }
        return std::make_unique<AnsweredLink>(format_host_link_line({false, 0, 0, {}, kNoToolkit}));
    }

    std::unique_ptr<PreparedLink> prepare_pull(const LinkCommand& command, const std::string& fault) override {
        if constexpr (kCudaBuilt)
            return std::make_unique<Pull>(
                links::prepare_pull(device_, {command.path, command.handle, command.gpu, command.bytes}, fault),
                command);
        return std::make_unique<AnsweredLink>(
            format_pulled_line({command.gpu, command.path, PeerCopyStatus::error, false, false, 0, kNoToolkit}));
    }

    std::unique_ptr<PreparedLink> prepare_all_reduce(const LinkCommand& command, const std::string&) override {
        if constexpr (kCudaBuilt) return std::make_unique<AllReduce>(device_, command);
        return std::make_unique<AnsweredLink>(format_nccl_line({false, 0, 0, 0, kNoToolkit}));
    }

    void release() override {
        if constexpr (kCudaBuilt) links::release_peer_buffers(device_);
    }

private:
    int device_;
    std::string pci_bus_id_;
    std::mutex staged_mutex_;  // stage_host_link runs beside open()
    std::unique_ptr<links::HostMemory> staged_;
};

}  // namespace

std::unique_ptr<GpuBackend> make_cuda_backend(int cuda_device) { return std::make_unique<CudaBackend>(cuda_device); }

}  // namespace provision
