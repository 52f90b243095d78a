#include "network/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/text.h"
#include "network/route.h"

namespace provision::network {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kGreeting = "provision-rendezvous 1";
constexpr std::chrono::milliseconds kRetryEvery{100};
// A node that has come waits this much past its own limit for node 0's
// answer: node 0 answers by its own limit, which started later or earlier.
constexpr std::chrono::milliseconds kAnswerGrace{10000};
constexpr int kMostIdleConnections = 64;  // hellos not yet complete, beyond the nodes'

class Socket {
public:
    explicit Socket(int fd = -1) : fd_(fd) {}
    ~Socket() { reset(); }
    Socket(Socket&& other) noexcept : fd_(other.release()) {}
    Socket& operator=(Socket&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = other.release();
        }
        return *this;
    }
    int fd() const { return fd_; }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Writes all of `text` before the deadline.
bool send_all(int fd, std::string_view text, Clock::time_point deadline) {
    while (!text.empty()) {
        const ssize_t sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
        if (sent > 0) {
            text.remove_prefix(static_cast<std::size_t>(sent));
            continue;
        }
        if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        pollfd one{fd, POLLOUT, 0};
        if (::poll(&one, 1, remaining_ms(deadline)) <= 0) return false;
    }
    return true;
}

// Reads one line (without its newline) before the deadline, at most kMostLineBytes.
std::optional<std::string> receive_line(int fd, Clock::time_point deadline, std::string& why) {
    std::string line;
    char buffer[256];
    while (true) {
        pollfd one{fd, POLLIN, 0};
        const int ready = ::poll(&one, 1, remaining_ms(deadline));
        if (ready == 0) {
            why = "no answer in time";
            return std::nullopt;
        }
        if (ready < 0 && errno == EINTR) continue;
        const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
        if (got == 0) {
            why = "the connection closed without an answer";
            return std::nullopt;
        }
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            why = std::strerror(errno);
            return std::nullopt;
        }
        line.append(buffer, static_cast<std::size_t>(got));
        if (const auto end = line.find('\n'); end != std::string::npos) return line.substr(0, end);
        if (line.size() > kMostLineBytes) {
            why = "an answer longer than a line";
            return std::nullopt;
        }
    }
}

std::vector<std::string_view> words_of(std::string_view line) {
    std::vector<std::string_view> words;
    while (!line.empty()) {
        const std::size_t space = line.find(' ');
        if (space != 0) words.push_back(line.substr(0, space));
        if (space == std::string_view::npos) break;
        line.remove_prefix(space + 1);
    }
    return words;
}

std::optional<int> number(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Listening on every address, IPv6 and IPv4 together where the host has IPv6.
Socket listen_on(std::uint16_t port, std::string& why) {
    Socket socket(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int on = 1, off = 0;
    if (socket.fd() >= 0) {
        ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        ::setsockopt(socket.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        sockaddr_in6 any{};
        any.sin6_family = AF_INET6;
        any.sin6_port = htons(port);
        any.sin6_addr = in6addr_any;
        if (::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&any), sizeof any) == 0 &&
            ::listen(socket.fd(), 128) == 0)
            return socket;
        if (errno == EADDRINUSE) {
            why = fmt::format("port {} is taken on this node: {}", port, std::strerror(errno));
            return Socket();
        }
    }
    socket = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (socket.fd() < 0) {
        why = fmt::format("cannot open a socket: {}", std::strerror(errno));
        return Socket();
    }
    ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_port = htons(port);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0 ||
        ::listen(socket.fd(), 128) != 0) {
        why = fmt::format("cannot listen on port {}: {}", port, std::strerror(errno));
        return Socket();
    }
    return socket;
}

std::string ranks_list(const std::vector<int>& ranks) {
    return fmt::format("{}", fmt::join(ranks, ","));
}

struct Arrived {
    Socket socket;
    int local_ranks = 0;
};

struct Pending {
    Socket socket;
    std::string buffer;
    Clock::time_point drop_at;  // a connection that says nothing is not kept waiting in a slot
};

constexpr std::chrono::milliseconds kHelloWithin{5000};

RendezvousOutcome serve(const RendezvousConfig& config, const MakeId& make_id) {
    RendezvousOutcome outcome;
    const Clock::time_point deadline = Clock::now() + config.limit;
    std::string why;
    Socket listener = listen_on(config.port, why);
    if (listener.fd() < 0) {
        outcome.status = RendezvousStatus::failed;
        outcome.detail = why;
        return outcome;
    }
    std::map<int, Arrived> arrived;  // by node rank
    std::vector<Pending> pending;
    const int expected = config.nodes - 1;
    // Answers one hello; true when the node joined.
    auto hello = [&](Pending& one, std::string_view line) {
        const auto words = words_of(line);
        std::string refusal;
        std::optional<int> nodes, rank, local;
        if (words.size() != 6 || fmt::format("{} {}", words[0], words[1]) != kGreeting) {
            refusal = "not a provision rendezvous";
        } else if (words[2] != config.job_key) {
            refusal = "another job's rendezvous (the launchers' variables differ)";
        } else if (!(nodes = number(words[3])) || *nodes != config.nodes) {
            refusal = fmt::format("node 0 counts {} nodes", config.nodes);
        } else if (!(rank = number(words[4])) || *rank < 1 || *rank >= config.nodes) {
            refusal = fmt::format("node rank must be 1 to {}", config.nodes - 1);
        } else if (arrived.count(*rank)) {
            refusal = fmt::format("node rank {} has come already", *rank);
        } else if (!(local = number(words[5])) || *local < 1 || *local > 4096) {
            refusal = "a node's ranks must be 1 to 4096";
        }
        if (!refusal.empty()) {
            send_all(one.socket.fd(), fmt::format("refused {}\n", refusal), Clock::now() + kRetryEvery);
            return false;
        }
        arrived[*rank] = Arrived{std::move(one.socket), *local};
        return true;
    };
    while (static_cast<int>(arrived.size()) < expected) {
        const int wait = remaining_ms(deadline);
        if (wait == 0) break;
        std::vector<pollfd> fds{{listener.fd(), POLLIN, 0}};
        for (const Pending& one : pending) fds.push_back({one.socket.fd(), POLLIN, 0});
        const int idle_wait = pending.empty() ? wait : std::min(wait, static_cast<int>(kHelloWithin.count()));
        if (::poll(fds.data(), fds.size(), idle_wait) < 0 && errno != EINTR) break;
        if (fds[0].revents & POLLIN) {
            while (static_cast<int>(pending.size()) < expected + kMostIdleConnections) {
                const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) break;
                pending.push_back({Socket(fd), {}, Clock::now() + kHelloWithin});
            }
        }
        std::vector<Pending> still;
        for (std::size_t i = 0; i < pending.size(); ++i) {
            Pending& one = pending[i];
            const short events = i + 1 < fds.size() ? fds[i + 1].revents : 0;
            if (!(events & (POLLIN | POLLHUP | POLLERR))) {
                if (Clock::now() < one.drop_at) still.push_back(std::move(one));
                continue;
            }
            char buffer[256];
            const ssize_t got = ::recv(one.socket.fd(), buffer, sizeof buffer, 0);
            if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR))) continue;  // closed: dropped
            if (got > 0) one.buffer.append(buffer, static_cast<std::size_t>(got));
            if (const auto end = one.buffer.find('\n'); end != std::string::npos) {
                hello(one, std::string_view(one.buffer).substr(0, end));
                continue;
            }
            if (one.buffer.size() <= kMostLineBytes) still.push_back(std::move(one));
        }
        pending = std::move(still);
    }
    if (static_cast<int>(arrived.size()) < expected) {
        outcome.status = RendezvousStatus::missing;
        for (int rank = 1; rank < config.nodes; ++rank)
            if (!arrived.count(rank)) outcome.missing.push_back(rank);
        const std::string line = fmt::format("missing {}\n", ranks_list(outcome.missing));
        for (auto& [rank, node] : arrived) send_all(node.socket.fd(), line, Clock::now() + kRetryEvery);
        outcome.detail = fmt::format("{} of {} nodes came", arrived.size() + 1, config.nodes);
        return outcome;
    }
    std::string id_why;
    const auto id = make_id(id_why);
    const Clock::time_point answer_by = Clock::now() + kAnswerGrace;
    if (!id || id->empty() || id->find_first_of(" \n") != std::string::npos) {
        outcome.status = RendezvousStatus::failed;
        outcome.detail = fmt::format("no NCCL id to hand out: {}", id_why.empty() ? "none was made" : id_why);
        const std::string line = fmt::format("failed {}\n", printable(outcome.detail, 256));
        for (auto& [rank, node] : arrived) send_all(node.socket.fd(), line, answer_by);
        return outcome;
    }
    // Global ranks: node 0's first, then each node's in order of node rank.
    int ranks = config.local_ranks;
    for (const auto& [rank, node] : arrived) ranks += node.local_ranks;
    int next = config.local_ranks;
    for (auto& [rank, node] : arrived) {
        send_all(node.socket.fd(), fmt::format("ok {} {} {}\n", *id, ranks, next), answer_by);
        next += node.local_ranks;
    }
    outcome.status = RendezvousStatus::joined;
    outcome.id = *id;
    outcome.ranks = ranks;
    outcome.first_rank = 0;
    outcome.detail = fmt::format("{} nodes, {} ranks", config.nodes, ranks);
    return outcome;
}

// Connects to node 0, retrying while it is not listening yet, until the deadline.
Socket connect_to(const IpAddress& address, std::uint16_t port, Clock::time_point deadline, std::string& why) {
    while (true) {
        const int family = address.family == Family::ipv4 ? AF_INET : AF_INET6;
        Socket socket(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (socket.fd() < 0) {
            why = fmt::format("cannot open a socket: {}", std::strerror(errno));
            return Socket();
        }
        sockaddr_storage remote{};
        socklen_t length = 0;
        if (family == AF_INET) {
            auto* in = reinterpret_cast<sockaddr_in*>(&remote);
            in->sin_family = AF_INET;
            in->sin_port = htons(port);
            std::memcpy(&in->sin_addr, address.bytes.data(), 4);
            length = sizeof(sockaddr_in);
        } else {
            auto* in6 = reinterpret_cast<sockaddr_in6*>(&remote);
            in6->sin6_family = AF_INET6;
            in6->sin6_port = htons(port);
            std::memcpy(&in6->sin6_addr, address.bytes.data(), 16);
            in6->sin6_scope_id = address.scope_id;
            length = sizeof(sockaddr_in6);
        }
        int error = 0;
        if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&remote), length) == 0) return socket;
        error = errno;
        if (error == EINPROGRESS) {
            pollfd one{socket.fd(), POLLOUT, 0};
            if (::poll(&one, 1, std::min(remaining_ms(deadline), 1000)) > 0) {
                socklen_t size = sizeof error;
                ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &size);
                if (error == 0) return socket;
            } else {
                error = ETIMEDOUT;
            }
        }
        why = std::strerror(error);
        if (remaining_ms(deadline) == 0) return Socket();
        std::this_thread::sleep_for(std::min<Clock::duration>(kRetryEvery, deadline - Clock::now()));
    }
}

RendezvousOutcome join(const RendezvousConfig& config) {
    RendezvousOutcome outcome;
    const Clock::time_point deadline = Clock::now() + config.limit;
    std::string why;
    const auto address = resolve_master(config.master_addr,
                                        std::min(config.limit, std::chrono::milliseconds(kResolveLimit * 10)), why);
    auto node_zero_missing = [&](const std::string& detail) {
        outcome.status = RendezvousStatus::missing;
        outcome.missing = {0};
        outcome.detail = detail;
        return outcome;
    };
    if (!address) return node_zero_missing(fmt::format("MASTER_ADDR: {}", why));
    Socket socket = connect_to(*address, config.port, deadline, why);
    if (socket.fd() < 0)
        return node_zero_missing(
            fmt::format("node 0 did not answer at {} port {}: {}", address->str(), config.port, why));
    const std::string hello = fmt::format("{} {} {} {} {}\n", kGreeting, config.job_key, config.nodes,
                                          config.node_rank, config.local_ranks);
    const Clock::time_point answer_by = deadline + kAnswerGrace;
    if (!send_all(socket.fd(), hello, answer_by)) return node_zero_missing("node 0 closed the connection");
    const auto line = receive_line(socket.fd(), answer_by, why);
    if (!line) return node_zero_missing(fmt::format("node 0 did not answer: {}", why));
    const auto words = words_of(*line);
    if (words.size() == 4 && words[0] == "ok") {
        const auto ranks = number(words[2]), first = number(words[3]);
        if (first && ranks && *first > 0 && *first + config.local_ranks <= *ranks) {
            outcome.status = RendezvousStatus::joined;
            outcome.id = std::string(words[1]);
            outcome.first_rank = *first;
            outcome.ranks = *ranks;
            outcome.detail = fmt::format("{} nodes, {} ranks", config.nodes, *ranks);
            return outcome;
        }
        outcome.detail = "node 0's answer does not add up";
    } else if (words.size() == 2 && words[0] == "missing") {
        outcome.status = RendezvousStatus::missing;
        for (std::string_view rest = words[1]; !rest.empty();) {
            const std::size_t comma = rest.find(',');
            if (const auto rank = number(rest.substr(0, comma)); rank && *rank >= 0 && *rank < config.nodes &&
                                                                 outcome.missing.size() < 4096)
                outcome.missing.push_back(*rank);
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
        outcome.detail = "node 0 waited for them in vain";
        return outcome;
    } else if (!words.empty() && words[0] == "refused") {
        outcome.status = RendezvousStatus::refused;
        outcome.detail = printable(std::string_view(*line).substr(std::min<std::size_t>(line->size(), 8)), 256);
        return outcome;
    } else if (!words.empty() && words[0] == "failed") {
        outcome.detail = printable(std::string_view(*line).substr(std::min<std::size_t>(line->size(), 7)), 256);
    } else {
        outcome.detail = fmt::format("node 0 said '{}'", echoed(*line));
    }
    outcome.status = RendezvousStatus::failed;
    return outcome;
}

}  // namespace

std::string_view to_string(RendezvousStatus status) {
    switch (status) {
        case RendezvousStatus::joined: return "joined";
        case RendezvousStatus::missing: return "missing";
        case RendezvousStatus::refused: return "refused";
        case RendezvousStatus::failed: break;
    }
    return "failed";
}

RendezvousOutcome rendezvous(const RendezvousConfig& config, const MakeId& make_id) {
    if (config.nodes < 2) {
        RendezvousOutcome outcome;
        outcome.status = RendezvousStatus::failed;
        outcome.detail = "one node: nothing to meet";
        return outcome;
    }
    return config.node_rank == 0 ? serve(config, make_id) : join(config);
}

std::string rendezvous_job_key(std::string_view master_addr, std::string_view master_port, int nodes,
                               std::string_view job_id) {
    // FNV-1a, 64 bits: short, the same on every node, no separator a value could forge.
    std::uint64_t hash = 0xcbf29ce484222325ull;
    const auto eat = [&](std::string_view text) {
        for (const char c : text) {
            hash ^= static_cast<unsigned char>(c);
            hash *= 0x100000001b3ull;
        }
        hash ^= 0xff;  // no byte of text: the boundary
        hash *= 0x100000001b3ull;
    };
    eat(master_addr);
    eat(master_port);
    eat(std::to_string(nodes));
    eat(job_id);
    return fmt::format("{:016x}", hash);
}

std::optional<Finding> rendezvous_finding(const RendezvousOutcome& outcome, const RendezvousConfig& config,
                                          const HealthPolicy& policy) {
    const double seconds = static_cast<double>(config.limit.count()) / 1000;
    switch (outcome.status) {
        case RendezvousStatus::joined: return std::nullopt;
        case RendezvousStatus::missing:
            return Finding{-1, -1, "nodes_missing", policy.level("nodes_missing"),
                           fmt::format("node rank{} {} of the job's {} nodes had not come to provision's rendezvous "
                                       "at MASTER_ADDR={} port {} within {:g} s ({}): the proof across nodes did not "
                                       "run; a node that never starts leaves NCCL's own start waiting too",
                                       outcome.missing.size() == 1 ? "" : "s", fmt::join(outcome.missing, ", "),
                                       config.nodes, echoed(config.master_addr), config.port,
                                       seconds, outcome.detail)};
        case RendezvousStatus::refused:
        case RendezvousStatus::failed:
            return Finding{-1, -1, "rendezvous_failed", policy.level("rendezvous_failed"),
                           fmt::format("provision's rendezvous at MASTER_ADDR={} port {} did not bring the nodes "
                                       "together ({}: {}): the proof across nodes did not run",
                                       echoed(config.master_addr), config.port,
                                       to_string(outcome.status), outcome.detail)};
    }
    return std::nullopt;
}

}  // namespace provision::network
