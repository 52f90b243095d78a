#include "worker/worker_links.h"

#include <algorithm>
#include <optional>

#include "worker_protocol/worker_protocol.h"

namespace provision {
namespace {

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

// Exports, the host memory and NCCL's id are answered at once; the
// measurements once the checks are done.
bool answered_at_once(LinkCommand::Kind kind) {
    return kind == LinkCommand::Kind::export_buffer || kind == LinkCommand::Kind::host_memory ||
           kind == LinkCommand::Kind::fabric_handle || kind == LinkCommand::Kind::nccl_id;
}

// The answer to `command` on a GPU that could not be opened.
std::string answer_without_gpu(const LinkCommand& command, const std::string& why) {
    const std::string detail = "the GPU could not be opened: " + why;
    switch (command.kind) {
        case LinkCommand::Kind::export_buffer: return format_exported_line({false, command.path, {}, detail});
        case LinkCommand::Kind::host_memory: return format_host_memory_line({false, -1, detail});
        case LinkCommand::Kind::fabric_handle:
            return format_fabric_handle_line({FabricHandleStatus::not_measured, 0, detail});
        case LinkCommand::Kind::nccl_id: return format_nccl_id_line({false, {}, detail});
        case LinkCommand::Kind::host_link: return format_host_link_line({false, 0, 0, {}, detail});
        case LinkCommand::Kind::pull:
            return format_pulled_line({command.gpu, command.path, PeerCopyStatus::error, false, false, 0, detail});
        case LinkCommand::Kind::nccl_all_reduce: break;
    }
    return format_nccl_line({false, 0, 0, 0, detail});
}

}  // namespace

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
    std::deque<std::unique_ptr<PreparedLink>> waiting;  // prepared, finished once the checks are done
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
                waiting.push_back(std::move(pending->link));
            }
        } else if (checks_done_ && !waiting.empty()) {
            auto pending = std::move(waiting.front());
            waiting.pop_front();
            lock.unlock();
            print_(pending->finish());
        } else {
            finished_ = true;
            changed_.notify_all();
            return;
        }
    }
}

std::optional<WorkerLinks::Pending> WorkerLinks::prepare(const std::string& line) {
    const auto command = parse_link_command(line);
    if (!command) return std::nullopt;
    Pending pending;
    if (!settings_.device_error.empty()) {
        std::string answer = answer_without_gpu(*command, settings_.device_error);
        if (answered_at_once(command->kind)) {
            pending.answer = std::move(answer);
        } else {
            pending.link = std::make_unique<AnsweredLink>(std::move(answer));
        }
        return pending;
    }
    GpuBackend& backend = *settings_.backend;
    const std::string fault = link_fault(settings_.fault, *command, settings_.source);
    switch (command->kind) {
        case LinkCommand::Kind::export_buffer: pending.answer = format_exported_line(backend.export_buffer(*command)); break;
        case LinkCommand::Kind::host_memory: pending.answer = format_host_memory_line(backend.host_memory()); break;
        case LinkCommand::Kind::fabric_handle:
            pending.answer = format_fabric_handle_line(backend.fabric_handle());
            break;
        case LinkCommand::Kind::nccl_id: pending.answer = format_nccl_id_line(backend.nccl_id(*command)); break;
        // The pinned buffers now; the copies once the checks are done: beside
        // the checks' own uploads, which share the copy engine, a GPU's host
        // link read as low as 23 GB/s of its 53 (4 x H100, one run of eight).
        case LinkCommand::Kind::host_link: pending.link = backend.prepare_host_link(*command, fault); break;
        case LinkCommand::Kind::pull: pending.link = backend.prepare_pull(*command, fault); break;
        case LinkCommand::Kind::nccl_all_reduce: pending.link = backend.prepare_all_reduce(*command, fault); break;
    }
    return pending;
}

}  // namespace provision
