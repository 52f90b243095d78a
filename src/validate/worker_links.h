// The link commands of one validation worker (worker_protocol.h), run on a
// thread of their own beside the checks: each is prepared the moment it
// arrives (buffers allocated, a peer's memory opened: the fixed costs, paid
// while the kernels run) and finished once the checks are done (the copies,
// timed on a GPU nothing else uses).  An export and the host-memory check
// need no wait: they are answered at once, so that the parent can hand the
// exported handles to the peers early.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace provision {

class SimulatedDevice;

struct WorkerLinkSettings {
    int cuda_device = 0;
    int source = 0;                    // the GPU's index as the workload sees it
    std::string pci_bus_id;            // its PCIe link is read from sysfs after the host copies
    std::string fault;                 // test-only fault spec
    std::string device_error;          // why the GPU could not be opened; empty when it was
    const SimulatedDevice* simulated = nullptr;  // test builds: act the links out through the fake driver
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
    struct Pending;
    void loop();
    std::unique_ptr<Pending> prepare(const std::string& line);
    std::string finish(Pending& pending);

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
