// provision's rendezvous and the gathering of the proof's outcomes at the
// size of a large job, on one machine: node 0 in a process of its own (its
// descriptors, memory and CPU are its own), the other nodes as threads of
// this one, each with provision's own code (network/rendezvous.h).  What
// stands in for NCCL: nothing; each node reports `passed` as soon as it has
// its id, so the figures are the meeting's alone.
//
// Prints a Markdown row a size: from the last node's arrival (the last
// thread's call to meet) to every node's `ok`, and from the last report to
// every node's outcome, in ms; node 0's open descriptors at their most, its
// peak resident memory and its CPU time.
//
// usage: rendezvous_scale [NODES...]      (default 16 256 1024)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "network/rendezvous.h"

using namespace provision::network;
using Clock = std::chrono::steady_clock;

namespace {

RendezvousConfig config_of(int nodes, int rank, std::uint16_t port) {
    RendezvousConfig config;
    config.master_addr = "127.0.0.1";
    config.port = port;
    config.nodes = nodes;
    config.min_nodes = nodes;
    config.node_rank = rank;
    config.local_ranks = 8;
    config.job_key = rendezvous_job_key("127.0.0.1", "29500", nodes, "bench");
    config.limit = std::chrono::milliseconds(120000);
    return config;
}

int open_descriptors() {
    int count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
    return count;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Node 0 listens: the nodes then arrive at once (a probe connection that
// says nothing is dropped by node 0 as any idle one is).
void wait_until_listening(std::uint16_t port) {
    for (int tries = 0; tries < 1000; ++tries) {
        Socket probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(probe.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

void raise_file_limit() {
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

// Node 0: meets, settles, and writes "descriptors rss_kib cpu_ms" to `out`.
[[noreturn]] void node_zero(int nodes, std::uint16_t port, int out) {
    Meeting meeting(config_of(nodes, 0, port));
    const MakeId id = [](std::string&) -> std::optional<std::string> { return std::string(256, 'a'); };
    const auto outcome = meeting.meet(id);
    const int descriptors = open_descriptors();
    const auto job = meeting.settle({0, NodeProof::passed, "bench"}, std::chrono::milliseconds(60000));
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const double cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                          (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
    char line[128];
    const int length = std::snprintf(line, sizeof line, "%d %ld %.1f %d %d\n", descriptors, usage.ru_maxrss, cpu_ms,
                                     outcome.status == RendezvousStatus::joined ? 1 : 0,
                                     job.count(NodeProof::passed));
    if (::write(out, line, static_cast<std::size_t>(length)) != length) std::_Exit(2);
    std::_Exit(0);
}

void measure(int nodes) {
    const std::uint16_t port = static_cast<std::uint16_t>(20000 + (::getpid() + nodes) % 20000);
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) std::exit(1);
    const pid_t zero = ::fork();
    if (zero == 0) {
        ::close(pipe_fds[0]);
        node_zero(nodes, port, pipe_fds[1]);
    }
    ::close(pipe_fds[1]);
    wait_until_listening(port);
    std::vector<Clock::time_point> arrived(static_cast<std::size_t>(nodes)), answered(arrived), reported(arrived),
        heard(arrived);
    std::atomic<int> joined{0}, passed{0};
    std::vector<std::thread> threads;
    for (int rank = 1; rank < nodes; ++rank) {
        threads.emplace_back([&, rank] {
            Meeting meeting(config_of(nodes, rank, port));
            const MakeId none = [](std::string&) -> std::optional<std::string> { return std::nullopt; };
            arrived[static_cast<std::size_t>(rank)] = Clock::now();
            const auto outcome = meeting.meet(none);
            answered[static_cast<std::size_t>(rank)] = Clock::now();
            if (outcome.status == RendezvousStatus::joined) ++joined;
            reported[static_cast<std::size_t>(rank)] = Clock::now();
            const auto job = meeting.settle({rank, NodeProof::passed, "bench"}, std::chrono::milliseconds(60000));
            heard[static_cast<std::size_t>(rank)] = Clock::now();
            if (job.heard && job.count(NodeProof::passed) == nodes) ++passed;
        });
    }
    for (auto& thread : threads) thread.join();
    char buffer[128] = {};
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer - 1);
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(zero, &status, 0);
    int descriptors = 0, zero_joined = 0, zero_passed = 0;
    long rss_kib = 0;
    double cpu_ms = 0;
    if (got <= 0 || std::sscanf(buffer, "%d %ld %lf %d %d", &descriptors, &rss_kib, &cpu_ms, &zero_joined,
                                &zero_passed) != 5) {
        std::printf("| %d | node 0 gave no figures |\n", nodes);
        return;
    }
    const auto last = [](const std::vector<Clock::time_point>& times) {
        return *std::max_element(times.begin() + 1, times.end());
    };
    std::printf("| %d | %d/%d | %.1f | %.1f | %d | %.1f | %.1f |\n", nodes, joined.load() + zero_joined,
                passed.load() + (zero_passed == nodes ? 1 : 0), ms_between(last(arrived), last(answered)),
                ms_between(last(reported), last(heard)), descriptors, static_cast<double>(rss_kib) / 1024, cpu_ms);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    raise_file_limit();
    std::vector<int> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {16, 256, 1024};
    std::printf("| nodes | joined/passed | last arrival to every ok (ms) | last report to every outcome (ms) | node 0's "
                "descriptors | node 0's peak RSS (MiB) | node 0's CPU (ms) |\n| --- | --- | --- | --- | --- | --- | "
                "--- |\n");
    for (const int nodes : sizes)
        if (nodes >= 2) measure(nodes);
    return 0;
}
