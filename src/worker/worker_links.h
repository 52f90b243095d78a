// The link commands of one validation worker's GPU (worker_protocol.h),
// run on a thread of their own beside the checks: each is prepared the
// moment it arrives (buffers allocated, a peer's memory opened: the fixed
// costs, paid while the kernels run) and finished once the checks are done
// (the copies, timed on a GPU nothing else uses).  An export, the
// host-memory check and NCCL's id need no wait: they are answered at once,
// so that the parent can hand the exported handles to the peers early.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "worker/gpu_backend.h"

namespace provision {

struct WorkerLinkSettings {
    int source = 0;                    // the GPU's index as the workload sees it
    std::string fault;                 // test-only fault spec
    std::string device_error;          // why the GPU could not be opened; empty when it was
    GpuBackend* backend = nullptr;     // the GPU's, opened
};

class WorkerLinks {
public:
    // `print` writes one line of output (thread-safe on the caller's side).
    WorkerLinks(WorkerLinkSettings settings, std::function<void(const std::string&)> print);
    ~WorkerLinks();  // waits for the thread: call end_of_input() first
    WorkerLinks(const WorkerLinks&) = delete;
    WorkerLinks& operator=(const WorkerLinks&) = delete;

    void add(const std::string& command_line);
    void end_of_input();
    void checks_done();
    // Until every command is answered and the input has ended.
    void wait();

private:
    // A command between its halves: answered already, or to be finished.
    struct Pending {
        std::string answer;
        std::unique_ptr<PreparedLink> link;
    };
    void loop();
    std::optional<Pending> prepare(const std::string& line);

    WorkerLinkSettings settings_;
    std::function<void(const std::string&)> print_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> lines_;
    bool input_ended_ = false;
    bool checks_done_ = false;
    bool finished_ = false;
    std::thread thread_;
};

}  // namespace provision
