#include "validate/worker_links.h"

#include <fmt/format.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "cumem_sharing.h"
#include "gpu/pcie_sysfs.h"
#include "link_checks.h"
#include "nccl_check.h"
#include "validate/simulated_device.h"
#include "validate/worker_protocol.h"

namespace provision {
namespace {

kernels::PeerPath kernel_path(PeerPath path) {
    return path == PeerPath::cumem_fd ? kernels::PeerPath::cumem_fd : kernels::PeerPath::legacy_ipc;
}

// The fault planted in a link command: a pull's pair's own ("link.0-1"),
// else all pulls' ("link"); the host link's ("host-link"); the all-reduce's
// ("nccl").  Exports, the host memory and the NCCL id have none.
std::string link_fault(const std::string& spec, const LinkCommand& command, int own_gpu) {
    if (command.kind == LinkCommand::Kind::host_link) return fault_for_check(spec, "host-link");
    if (command.kind == LinkCommand::Kind::nccl_all_reduce) return fault_for_check(spec, "nccl");
    if (command.kind != LinkCommand::Kind::pull) return {};
    const int a = std::min(command.gpu, own_gpu), b = std::max(command.gpu, own_gpu);
    if (auto fault = fault_for_check(spec, "link." + std::to_string(a) + "-" + std::to_string(b)); !fault.empty())
        return fault;
    return fault_for_check(spec, "link");
}

PulledLine pulled_line(int from, PeerPath path, const kernels::PeerPull& pull) {
    PulledLine line;
    line.from = from;
    line.path = path;
    line.gb_per_s = pull.gb_per_s;
    line.detail = pull.detail;
    switch (pull.status) {
        case kernels::PeerPullStatus::passed: line.status = PeerCopyStatus::passed; break;
        case kernels::PeerPullStatus::wrong_bytes: line.status = PeerCopyStatus::wrong_bytes; break;
        case kernels::PeerPullStatus::no_peer_access:
            line.status = PeerCopyStatus::skipped;
            line.no_peer_access = true;
            break;
        case kernels::PeerPullStatus::path_failed:
            line.status = PeerCopyStatus::error;
            line.path_failed = true;
            break;
        case kernels::PeerPullStatus::error: line.status = PeerCopyStatus::error; break;
    }
    return line;
}

// What the test builds' simulated worker keeps of its GPUs' cuMem exports:
// the real sockets serving the fake driver's descriptors.
struct SimulatedExports {
    std::mutex mutex;
    std::vector<std::unique_ptr<kernels::cumem::SharedBuffer>> buffers;

    void keep(std::unique_ptr<kernels::cumem::SharedBuffer> buffer) {
        std::lock_guard lock(mutex);
        buffers.push_back(std::move(buffer));
    }
    // The allocation and size of one of them, by its socket.
    std::optional<std::pair<kernels::cumem::Handle, std::size_t>> find(const std::string& socket_name) {
        std::lock_guard lock(mutex);
        for (const auto& buffer : buffers)
            if (buffer->socket_name() == socket_name) return std::pair{buffer->handle(), buffer->size()};
        return std::nullopt;
    }
};
SimulatedExports& simulated_exports() {
    static SimulatedExports exports;
    return exports;
}

}  // namespace

// One command between its two halves.
struct WorkerLinks::Pending {
    LinkCommand command;
    std::string fault;
    std::string answer;  // set when the command is answered without waiting for the checks
    std::unique_ptr<kernels::HostLinkCheck> host_link;
    std::unique_ptr<kernels::PeerPullCheck> pull;
    std::optional<kernels::cumem::Failure> simulated_failure;  // the simulated pull's opening
    std::unique_ptr<kernels::cumem::ImportedBuffer> simulated_import;
};

WorkerLinks::WorkerLinks(WorkerLinkSettings settings, std::function<void(const std::string&)> print)
    : settings_(std::move(settings)), print_(std::move(print)), thread_([this] { loop(); }) {}

WorkerLinks::~WorkerLinks() {
    end_of_input();
    checks_done();
    if (thread_.joinable()) thread_.join();
}

void WorkerLinks::add(const std::string& command_line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(command_line);
    changed_.notify_all();
}

void WorkerLinks::end_of_input() {
    std::lock_guard lock(mutex_);
    input_ended_ = true;
    changed_.notify_all();
}

void WorkerLinks::checks_done() {
    std::lock_guard lock(mutex_);
    checks_done_ = true;
    changed_.notify_all();
}

void WorkerLinks::wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return finished_; });
}

void WorkerLinks::loop() {
    std::deque<std::unique_ptr<Pending>> waiting;  // prepared, finished once the checks are done
    for (;;) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] {
            return !lines_.empty() || (checks_done_ && !waiting.empty()) || (input_ended_ && waiting.empty());
        });
        if (!lines_.empty()) {  // new commands first: their preparation overlaps the kernels
            const std::string line = std::move(lines_.front());
            lines_.pop_front();
            lock.unlock();
            auto pending = prepare(line);
            if (!pending) continue;
            if (!pending->answer.empty()) {
                print_(pending->answer);
            } else {
                waiting.push_back(std::move(pending));
            }
        } else if (checks_done_ && !waiting.empty()) {
            auto pending = std::move(waiting.front());
            waiting.pop_front();
            lock.unlock();
            print_(finish(*pending));
        } else {
            finished_ = true;
            changed_.notify_all();
            return;
        }
    }
}

std::unique_ptr<WorkerLinks::Pending> WorkerLinks::prepare(const std::string& line) {
    const auto command = parse_link_command(line);
    if (!command) return nullptr;
    auto pending = std::make_unique<Pending>();
    pending->command = *command;
    pending->fault = link_fault(settings_.fault, *command, settings_.source);
    const std::string& error = settings_.device_error;
    const SimulatedDevice* simulated = settings_.simulated;
    switch (command->kind) {
        case LinkCommand::Kind::export_buffer: {
            ExportedLine exported{false, command->path, {}, {}};
            if (!error.empty()) {
                exported.detail = "the GPU could not be opened: " + error;
            } else if (simulated && command->path == PeerPath::legacy_ipc) {
                const auto failure = simulated->export_legacy_handle();
                exported.ok = !failure;
                exported.handle = "simulated-" + std::to_string(command->gpu);
                exported.detail = failure ? failure->detail : "simulated";
            } else if (simulated) {
                kernels::cumem::Failure failure;
                auto shared = kernels::cumem::SharedBuffer::create(simulated->cumem_driver(), settings_.cuda_device,
                                                                   command->bytes, failure);
                exported.ok = shared != nullptr;
                exported.handle = shared ? shared->socket_name() : std::string();
                exported.detail = shared ? "simulated" : failure.detail;
                if (shared) simulated_exports().keep(std::move(shared));
            } else {
                const auto real = kernels::export_peer_buffer(settings_.cuda_device, command->gpu, command->bytes,
                                                              kernel_path(command->path));
                exported.ok = real.ok;
                exported.handle = real.handle;
                exported.detail = real.detail;
            }
            pending->answer = format_exported_line(exported);
            break;
        }
        case LinkCommand::Kind::host_memory: {
            HostMemoryLine memory;
            if (!error.empty()) {
                memory.detail = "the GPU could not be opened: " + error;
            } else if (simulated) {
                const auto result =
                    kernels::cumem::allocate_host_numa(simulated->cumem_driver(), settings_.cuda_device, nullptr);
                memory = {result.ok, result.numa_node, result.ok ? "simulated" : result.failure.detail};
            } else {
                const auto result = kernels::check_host_numa_memory(settings_.cuda_device);
                memory = {result.ok, result.numa_node, result.detail};
            }
            pending->answer = format_host_memory_line(memory);
            break;
        }
        case LinkCommand::Kind::nccl_id: {
            NcclIdLine id;
            if (!error.empty()) {
                id.detail = "the GPU could not be opened: " + error;
            } else if (simulated) {
                id = {true, "simulated", "simulated"};
            } else {
                const auto made = kernels::make_nccl_unique_id(command->library);
                id = {made.ok, made.id, made.detail};
            }
            pending->answer = format_nccl_id_line(id);
            break;
        }
        case LinkCommand::Kind::nccl_all_reduce: break;  // all ranks join once their checks are done
        case LinkCommand::Kind::host_link:
            // The pinned buffers now; the copies once the checks are done: beside
            // the checks' own uploads, which share the copy engine, a GPU's host
            // link read as low as 23 GB/s of its 53 (4 x H100, one run of eight).
            if (error.empty() && !simulated)
                pending->host_link = kernels::prepare_host_link(settings_.cuda_device, command->bytes);
            break;
        case LinkCommand::Kind::pull:
            if (!error.empty()) break;
            if (simulated && command->path == PeerPath::legacy_ipc) {
                pending->simulated_failure = simulated->open_legacy_handle();
            } else if (simulated) {
                kernels::cumem::Failure failure;
                const auto& driver = simulated->cumem_driver();
                if (const auto own = simulated_exports().find(command->handle)) {  // mapped again, as the real one
                    pending->simulated_import = kernels::cumem::ImportedBuffer::map_own(
                        driver, settings_.cuda_device, own->first, own->second, failure);
                } else {
                    pending->simulated_import = kernels::cumem::ImportedBuffer::open(
                        driver, settings_.cuda_device, command->handle, 30.0, failure);
                }
                if (!pending->simulated_import) pending->simulated_failure = failure;
            } else {
                pending->pull = kernels::prepare_pull(
                    settings_.cuda_device,
                    {kernel_path(command->path), command->handle, command->gpu, command->bytes}, pending->fault);
            }
            break;
    }
    return pending;
}

std::string WorkerLinks::finish(Pending& pending) {
    const LinkCommand& command = pending.command;
    const std::string& error = settings_.device_error;
    const std::string& fault = pending.fault;
    if (settings_.simulated && fault == "hang")
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // the parent's limit ends it
    if (command.kind == LinkCommand::Kind::nccl_all_reduce) {
        if (!error.empty()) return format_nccl_line({false, 0, 0, 0, "the GPU could not be opened: " + error});
        if (settings_.simulated && fault == "error") return format_nccl_line({false, 10, 0, 0, "simulated: error"});
        if (settings_.simulated) return format_nccl_line({true, 10, 1, 100, "simulated"});
        const auto run = kernels::run_nccl_all_reduce(settings_.cuda_device, command.library, command.ranks, command.gpu,
                                                      command.handle, command.bytes, command.repeats);
        return format_nccl_line({run.ok, run.init_ms, run.ms, run.bus_gb_per_s, run.detail});
    }
    if (command.kind == LinkCommand::Kind::host_link) {
        if (!error.empty()) return format_host_link_line({false, 0, 0, {}, "the GPU could not be opened: " + error});
        if (settings_.simulated) {
            const double rate = fault == "slow" ? 0.5 : 100.0;
            return format_host_link_line({fault != "error", rate, rate, {}, "simulated"});
        }
        const auto measure = pending.host_link->run(command.repeats);
        HostLinkLine line{measure.ok, measure.h2d_gb_per_s, measure.d2h_gb_per_s, {}, measure.detail};
        if (measure.ok) line.link = read_pcie_link(settings_.pci_bus_id);  // while the link is still busy
        return format_host_link_line(line);
    }
    // A pull.
    if (!error.empty())
        return format_pulled_line(
            {command.gpu, command.path, PeerCopyStatus::error, false, false, 0, "the GPU could not be opened: " + error});
    if (!settings_.simulated) return format_pulled_line(pulled_line(command.gpu, command.path, pending.pull->run(command.repeats)));
    PulledLine line;
    line.from = command.gpu;
    line.path = command.path;
    pending.simulated_import.reset();  // unmapped after the copy, as the real one is
    if (const auto& failure = pending.simulated_failure) {
        line.status = failure->code == kernels::cumem::kErrorPeerAccessUnsupported ? PeerCopyStatus::skipped
                                                                                    : PeerCopyStatus::error;
        line.no_peer_access = failure->code == kernels::cumem::kErrorPeerAccessUnsupported;
        line.path_failed = !line.no_peer_access;
        line.detail = failure->detail;
        return format_pulled_line(line);
    }
    line.status = fault == "wrong-bytes" ? PeerCopyStatus::wrong_bytes
                  : fault == "error"     ? PeerCopyStatus::error
                                         : PeerCopyStatus::passed;
    line.no_peer_access = fault == "no-peer-access";
    if (line.no_peer_access) line.status = PeerCopyStatus::skipped;
    line.gb_per_s = fault == "slow" ? 0.5 : 1000.0;
    line.detail = fault.empty() ? "simulated" : "simulated: " + fault;
    return format_pulled_line(line);
}

}  // namespace provision
