#include "network/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/text.h"
#include "network/route.h"
#include "network/wire.h"

namespace provision::network {
namespace {

constexpr std::string_view kGreeting = "provision-rendezvous";
constexpr std::string_view kProtocol = "2";
constexpr std::chrono::milliseconds kRetryEvery{100};
// How often an unresolvable MASTER_ADDR is looked up again: on Kubernetes
// the master's DNS name appears only once its pod exists.
constexpr std::chrono::milliseconds kResolveEvery{1000};
// A node that has come waits this much past node 0's limit (which node 0
// told it in `wait`) for node 0's answer, and past the proof's limit for the
// job's outcome.
constexpr std::chrono::milliseconds kAnswerGrace{10000};
// A connection must say its hello (and its proof) within this.
constexpr std::chrono::milliseconds kHelloWithin{5000};
// An elastic job (MIN:MAX) closes once MIN nodes have come and no more came
// for this long: torchrun's own rendezvous's last call (30 s by default,
// torch/distributed/elastic/rendezvous/dynamic_rendezvous.py, RendezvousTimeout).
constexpr std::chrono::milliseconds kLastCall{30000};
// Connections that have not yet said who they are, beyond one for each node
// still to come: the oldest goes when one more comes.
constexpr std::size_t kMostIdleConnections = 64;
constexpr std::int64_t kMostRanksANode = 4096;
constexpr std::int64_t kMostRanks = std::int64_t{1} << 24;
// NCCL's unique id is 128 bytes, which the worker writes as 256 hex digits.
constexpr std::size_t kMostIdDigits = 512;
// What one WHY of a line may carry.
constexpr std::size_t kMostReasonBytes = 512;

std::string reason(std::string_view why) { return printable(why.empty() ? "-" : why, kMostReasonBytes); }

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
            ::listen(socket.fd(), SOMAXCONN) == 0)
            return socket;
        if (errno == EADDRINUSE) {
            why = fmt::format("port {} is taken on this node ({}): another job's node 0, or another provision of "
                              "this node, listens there; give each job its own --rendezvous-port",
                              port, std::strerror(errno));
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
        ::listen(socket.fd(), SOMAXCONN) != 0) {
        why = fmt::format("cannot listen on port {}: {}", port, std::strerror(errno));
        return Socket();
    }
    return socket;
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
        const socklen_t length = socket_address_of(address, port, remote);
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

// MASTER_ADDR, looked up again every kResolveEvery until the deadline.
std::optional<IpAddress> resolve_until(const std::string& master_addr, Clock::time_point deadline, std::string& why) {
    while (true) {
        const auto limit = std::chrono::milliseconds(std::min<long long>(remaining_ms(deadline), kResolveLimit.count() * 10));
        if (auto address = resolve_master(master_addr, std::max(limit, std::chrono::milliseconds(1)), why))
            return address;
        if (remaining_ms(deadline) == 0) return std::nullopt;
        std::this_thread::sleep_for(std::min<Clock::duration>(kResolveEvery, deadline - Clock::now()));
        if (remaining_ms(deadline) == 0) return std::nullopt;
    }
}

// The descriptors node 0 holds at most: one a node counted and one a node
// still saying its hello, the idle connections beyond them, and a margin for
// the workers' pipes and the files of the run.
rlim_t descriptors_needed(int nodes) { return 2 * static_cast<rlim_t>(nodes) + kMostIdleConnections + 256; }

// Raises the soft limit on open files toward the hard one where node 0 needs
// more; a note where even the hard limit is short.
std::optional<std::string> make_room_for(int nodes) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::nullopt;
    const rlim_t needed = descriptors_needed(nodes);
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return std::nullopt;
    const rlim_t wanted = limit.rlim_max == RLIM_INFINITY ? needed : std::min(needed, limit.rlim_max);
    if (wanted > limit.rlim_cur) {
        rlimit raised = limit;
        raised.rlim_cur = wanted;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    if (limit.rlim_cur >= needed) return std::nullopt;
    return fmt::format("node 0 may open {} files (RLIMIT_NOFILE, hard limit {}) but a rendezvous of {} nodes needs "
                       "about {}: nodes beyond that cannot connect and are counted missing",
                       limit.rlim_cur, limit.rlim_max == RLIM_INFINITY ? std::string("unlimited") :
                                                                          std::to_string(limit.rlim_max),
                       nodes, needed);
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

struct Meeting::Peer {
    enum class Stage { hello, proof, counted };
    Socket socket;
    LineReader reader;
    Stage stage = Stage::hello;
    Clock::time_point drop_at{};  // a connection still to say its hello or proof
    int node = -1;
    int local_ranks = 0;
    std::string hello;            // its hello line, which its proof covers
    std::string challenge;        // node 0's nonce for it
    std::optional<NodeResult> report;
    bool gone = false;            // its connection closed
};

Meeting::Meeting(RendezvousConfig config) : config_(std::move(config)) {}
Meeting::~Meeting() = default;

RendezvousOutcome Meeting::meet(const MakeId& make_id) {
    if (config_.nodes < 2) {
        RendezvousOutcome outcome;
        outcome.detail = "one node: nothing to meet";
        return outcome;
    }
    return config_.node_rank == 0 ? serve(make_id) : join();
}

RendezvousOutcome Meeting::serve(const MakeId& make_id) {
    RendezvousOutcome outcome;
    const Clock::time_point deadline = Clock::now() + config_.limit;
    if (const auto short_of_files = make_room_for(config_.nodes)) outcome.file_limit = *short_of_files;
    std::string why;
    Socket listener = listen_on(config_.port, why);
    if (!listener.open()) {
        outcome.status = RendezvousStatus::failed;
        outcome.detail = why;
        return outcome;
    }
    std::map<int, std::unique_ptr<Peer>> counted;  // by node rank
    std::vector<std::unique_ptr<Peer>> pending;    // in the order they came
    const bool elastic = config_.min_nodes < config_.nodes;
    std::optional<Clock::time_point> last_call;    // elastic: when the door closes
    const auto send = [](Peer& peer, const std::string& line) {
        if (!send_all(peer.socket.fd(), line, Clock::now() + kRetryEvery)) peer.gone = true;
    };
    // A counted node that closed (or broke the protocol before its answer)
    // has left: it is no longer counted, and may come again.
    const auto has_left = [](Peer& peer) {
        std::string line;
        const auto read = peer.reader.next(peer.socket.fd(), line);
        return read == LineReader::Read::closed || read == LineReader::Read::error ||
               read == LineReader::Read::too_long;
    };
    const auto drop_those_gone = [&] {
        std::erase_if(counted, [&](auto& entry) { return has_left(*entry.second); });
    };
    // Counts a node that said who it is (and proved it): answered at once
    // with how long node 0 will wait, so that it waits no less.
    const auto count = [&](std::unique_ptr<Peer> peer) {
        if (const auto old = counted.find(peer->node); old != counted.end()) {
            if (!has_left(*old->second)) {
                send(*peer, fmt::format("refused node rank {} has come already, and is still connected\n", peer->node));
                return;
            }
            counted.erase(old);  // the node came back: its first connection is gone
        }
        send(*peer, fmt::format("wait {}\n", remaining_ms(deadline)));
        if (peer->gone) return;
        peer->stage = Peer::Stage::counted;
        const int node = peer->node;
        counted[node] = std::move(peer);
        if (elastic && !last_call && static_cast<int>(counted.size()) + 1 >= config_.min_nodes)
            last_call = std::min(deadline, Clock::now() + kLastCall);
    };
    // A hello: refused with a reason, or asked for its proof, or counted.
    const auto hello = [&](std::unique_ptr<Peer> peer, const std::string& line) {
        const auto words = words_of(line);
        std::string refusal;
        std::optional<std::int64_t> nodes, rank, local;
        if (words.size() != 7 || words[0] != kGreeting) {
            refusal = "not a provision rendezvous";
        } else if (words[1] != kProtocol) {
            refusal = fmt::format("node 0 speaks the rendezvous's version {}: run the same provision on every node",
                                  kProtocol);
        } else if (words[2] != config_.job_key) {
            refusal = "another job's rendezvous (the launchers' variables differ)";
        } else if (!(nodes = bounded_number(words[3], 1, kMostRanks)) || *nodes != config_.nodes) {
            refusal = fmt::format("node 0 counts {} nodes", config_.nodes);
        } else if (!(rank = bounded_number(words[4], 1, config_.nodes - 1))) {
            refusal = fmt::format("node rank must be 1 to {}", config_.nodes - 1);
        } else if (!(local = bounded_number(words[5], 0, kMostRanksANode))) {
            refusal = fmt::format("a node's ranks must be 0 to {}", kMostRanksANode);
        } else if (!is_hex(words[6], 64)) {
            refusal = "a hello without a nonce";
        }
        if (!refusal.empty()) {
            send(*peer, fmt::format("refused {}\n", refusal));
            return;
        }
        peer->node = static_cast<int>(*rank);
        peer->local_ranks = static_cast<int>(*local);
        peer->hello = line;
        if (!config_.token) {
            count(std::move(peer));
            return;
        }
        peer->challenge = fresh_nonce();
        const std::string mine = config_.token->prove(fmt::format("node0 {} {} {}", words[6], peer->challenge,
                                                                   config_.job_key));
        send(*peer, fmt::format("challenge {} {}\n", peer->challenge, mine));
        peer->stage = Peer::Stage::proof;
        peer->drop_at = Clock::now() + kHelloWithin;
        pending.push_back(std::move(peer));
    };
    const auto proof = [&](std::unique_ptr<Peer> peer, const std::string& line) {
        const auto words = words_of(line);
        if (words.size() == 2 && words[0] == "proof" &&
            config_.token->proves(words[1], fmt::format("node {} {}", peer->challenge, peer->hello))) {
            count(std::move(peer));
            return;
        }
        send(*peer, "refused this node does not hold the job's rendezvous token\n");
    };
    const auto enough = [&] {
        if (static_cast<int>(counted.size()) + 1 >= config_.nodes) return true;
        return last_call && Clock::now() >= *last_call;
    };

    while (!enough()) {
        const int wait = remaining_ms(last_call ? std::min(deadline, *last_call) : deadline);
        if (wait == 0) break;
        std::vector<pollfd> fds{{listener.fd(), POLLIN, 0}};
        Clock::time_point wake = Clock::now() + std::chrono::milliseconds(wait);
        for (const auto& peer : pending) {
            fds.push_back({peer->socket.fd(), POLLIN, 0});
            wake = std::min(wake, peer->drop_at);
        }
        for (const auto& [node, peer] : counted) fds.push_back({peer->socket.fd(), POLLIN, 0});
        if (::poll(fds.data(), fds.size(), remaining_ms(wake)) < 0 && errno != EINTR) break;
        // Every connection waiting in the queue is taken, so the listener
        // never stays readable: the oldest idle one makes room for a new one.
        if (fds[0].revents & POLLIN) {
            while (true) {
                const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (fd < 0) break;
                // Room for every node still to come at once (a job's nodes
                // arrive together), and kMostIdleConnections more.
                const std::size_t room = static_cast<std::size_t>(config_.nodes - 1) - counted.size() +
                                         kMostIdleConnections;
                if (pending.size() >= room) pending.erase(pending.begin());
                auto peer = std::make_unique<Peer>();
                peer->socket = Socket(fd);
                peer->drop_at = Clock::now() + kHelloWithin;
                pending.push_back(std::move(peer));
            }
        }
        drop_those_gone();
        std::vector<std::unique_ptr<Peer>> waiting = std::move(pending);
        pending.clear();
        for (auto& peer : waiting) {
            std::string line;
            const auto read = peer->reader.next(peer->socket.fd(), line);
            if (read == LineReader::Read::line) {
                if (peer->stage == Peer::Stage::hello) {
                    hello(std::move(peer), line);
                } else {
                    proof(std::move(peer), line);
                }
            } else if (read == LineReader::Read::nothing_yet && Clock::now() < peer->drop_at) {
                pending.push_back(std::move(peer));
            }  // closed, too long, or silent past its time: dropped
        }
    }
    // Those that left while the last ones came are not counted.
    drop_those_gone();
    const int present = static_cast<int>(counted.size()) + 1;
    std::vector<int> missing;
    for (int rank = 1; rank < config_.nodes; ++rank)
        if (!counted.count(rank)) missing.push_back(rank);
    if (present < config_.min_nodes) {
        outcome.status = RendezvousStatus::missing;
        outcome.missing_count = static_cast<int>(missing.size());
        outcome.missing.assign(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(
                                                                     std::min(missing.size(), kMostNamedNodes)));
        const std::string line =
            fmt::format("missing {} {}\n", missing.size(), rank_ranges(missing, kMostLineBytes - 32));
        for (auto& [rank, peer] : counted) send(*peer, line);
        outcome.detail = elastic ? fmt::format("{} of at least {} nodes came", present, config_.min_nodes)
                                 : fmt::format("{} of {} nodes came", present, config_.nodes);
        return outcome;
    }
    std::string id_why;
    const auto id = make_id(id_why);
    if (!id || !is_hex(*id, kMostIdDigits)) {
        outcome.status = RendezvousStatus::failed;
        outcome.detail = fmt::format("no NCCL id to hand out: {}",
                                     id ? "the worker's id is malformed" : id_why.empty() ? "none was made" : id_why);
        const std::string line = fmt::format("failed {}\n", reason(outcome.detail));
        for (auto& [rank, peer] : counted) send(*peer, line);
        return outcome;
    }
    // Global ranks: node 0's first, then each node's in order of node rank.
    std::int64_t ranks = config_.local_ranks;
    for (const auto& [rank, peer] : counted) ranks += peer->local_ranks;
    std::int64_t next = config_.local_ranks;
    for (auto& [rank, peer] : counted) {
        send(*peer, fmt::format("ok {} {} {}\n", *id, ranks, next));
        next += peer->local_ranks;
        peers_.push_back(std::move(peer));
    }
    joined_ = true;
    outcome.status = RendezvousStatus::joined;
    outcome.id = *id;
    outcome.ranks = static_cast<int>(ranks);
    outcome.first_rank = 0;
    outcome.nodes = present;
    outcome.missing_count = static_cast<int>(missing.size());  // an elastic job's absent nodes
    outcome.missing.assign(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(
                                                                 std::min(missing.size(), kMostNamedNodes)));
    outcome.detail = fmt::format("{} nodes, {} ranks", present, ranks);
    return outcome;
}

RendezvousOutcome Meeting::join() {
    RendezvousOutcome outcome;
    const Clock::time_point deadline = Clock::now() + config_.limit;
    std::string why;
    auto node_zero_missing = [&](const std::string& detail) {
        outcome.status = RendezvousStatus::missing;
        outcome.missing = {0};
        outcome.missing_count = 1;
        outcome.detail = detail;
        return outcome;
    };
    const auto address = resolve_until(config_.master_addr, deadline, why);
    if (!address) return node_zero_missing(fmt::format("MASTER_ADDR: {}", why));
    auto peer = std::make_unique<Peer>();
    peer->socket = connect_to(*address, config_.port, deadline, why);
    if (!peer->socket.open())
        return node_zero_missing(
            fmt::format("node 0 did not answer at {} port {}: {}", address->str(), config_.port, why));
    const std::string nonce = fresh_nonce();
    const std::string hello = fmt::format("{} {} {} {} {} {} {}", kGreeting, kProtocol, config_.job_key, config_.nodes,
                                          config_.node_rank, config_.local_ranks, nonce);
    Clock::time_point answer_by = deadline + kAnswerGrace;
    if (!send_all(peer->socket.fd(), hello + "\n", answer_by)) return node_zero_missing("node 0 closed the connection");
    bool node_zero_proved = false;
    while (true) {
        std::string line;
        const auto read = peer->reader.wait(peer->socket.fd(), answer_by, line);
        if (read == LineReader::Read::too_long) {
            outcome.status = RendezvousStatus::failed;
            outcome.detail = fmt::format("node 0 answered {}", to_string(read));
            return outcome;
        }
        if (read != LineReader::Read::line)
            return node_zero_missing(fmt::format("node 0 did not answer: {}", to_string(read)));
        const auto words = words_of(line);
        const std::string_view verb = words.empty() ? std::string_view() : words[0];
        if (verb == "challenge" && words.size() == 3 && is_hex(words[1], 64)) {
            // Node 0 holds a token: prove ours (or say we have none).
            if (config_.token) {
                if (!config_.token->proves(words[2], fmt::format("node0 {} {} {}", nonce, words[1], config_.job_key))) {
                    outcome.status = RendezvousStatus::refused;
                    outcome.detail = "node 0 could not prove it holds the job's rendezvous token: not trusted";
                    return outcome;
                }
                node_zero_proved = true;
            }
            const std::string answer =
                config_.token ? config_.token->prove(fmt::format("node {} {}", words[1], hello)) : std::string("-");
            if (!send_all(peer->socket.fd(), fmt::format("proof {}\n", answer), answer_by))
                return node_zero_missing("node 0 closed the connection");
            continue;
        }
        if (config_.token && !node_zero_proved && verb != "refused") {
            outcome.status = RendezvousStatus::refused;
            outcome.detail = "node 0 did not ask for the job's rendezvous token: it does not hold it, not trusted";
            return outcome;
        }
        if (verb == "wait" && words.size() == 2) {
            // Counted: node 0 answers by its own limit, which may end after ours.
            if (const auto ms = bounded_number(words[1], 0, std::int64_t{1} << 31))
                answer_by = std::max(answer_by, Clock::now() + std::chrono::milliseconds(*ms) + kAnswerGrace);
            continue;
        }
        if (verb == "ok" && words.size() == 4) {
            const auto ranks = bounded_number(words[2], 1, kMostRanks);
            const auto first = bounded_number(words[3], 1, kMostRanks);
            if (is_hex(words[1], kMostIdDigits) && ranks && first && *first + config_.local_ranks <= *ranks) {
                outcome.status = RendezvousStatus::joined;
                outcome.id = std::string(words[1]);
                outcome.first_rank = static_cast<int>(*first);
                outcome.ranks = static_cast<int>(*ranks);
                outcome.detail = fmt::format("{} ranks", *ranks);
                node_zero_ = std::move(peer);
                joined_ = true;
                return outcome;
            }
            outcome.detail = fmt::format("node 0's answer does not add up: '{}'", echoed(line));
        } else if (verb == "missing" && words.size() == 3) {
            const auto count = bounded_number(words[1], 1, config_.nodes);
            const auto ranks = parse_rank_ranges(words[2], config_.nodes, kMostNamedNodes);
            if (count && ranks) {
                outcome.status = RendezvousStatus::missing;
                outcome.missing = *ranks;
                outcome.missing_count = static_cast<int>(*count);
                outcome.detail = "node 0 waited for them in vain";
                return outcome;
            }
            outcome.detail = fmt::format("node 0's answer does not add up: '{}'", echoed(line));
        } else if (verb == "refused") {
            outcome.status = RendezvousStatus::refused;
            outcome.detail = printable(rest_after(line, 1), kMostReasonBytes);
            return outcome;
        } else if (verb == "failed") {
            outcome.detail = printable(rest_after(line, 1), kMostReasonBytes);
        } else {
            outcome.detail = fmt::format("node 0 said '{}'", echoed(line));
        }
        outcome.status = RendezvousStatus::failed;
        return outcome;
    }
}

void Meeting::read_peers() {
    for (auto& peer : peers_) {
        if (peer->gone || peer->report) continue;
        std::string line;
        const auto read = peer->reader.next(peer->socket.fd(), line);
        if (read == LineReader::Read::nothing_yet) continue;
        std::optional<NodeResult> lost;
        if (read == LineReader::Read::line) {
            const auto words = words_of(line);
            const auto proof = words.size() >= 2 && words[0] == "report" ? parse_node_proof(words[1]) : std::nullopt;
            if (!proof || *proof == NodeProof::vanished || *proof == NodeProof::silent) {
                peer->report = NodeResult{peer->node, NodeProof::failed,
                                          fmt::format("node {} said '{}'", peer->node, echoed(line))};
            } else {
                peer->report = NodeResult{peer->node, *proof, printable(rest_after(line, 2), kMostReasonBytes)};
            }
            if (peer->report->proof == NodeProof::failed) lost = peer->report;
        } else {
            peer->gone = true;
            lost = NodeResult{peer->node, NodeProof::vanished,
                              fmt::format("its connection to node 0 closed before it reported ({})", to_string(read))};
        }
        if (!lost) continue;
        // Every other node hears of it at once, so its ranks stop waiting.
        gone_.push_back(*lost);
        const std::string line_out =
            fmt::format("gone {} {} {}\n", lost->node, to_string(lost->proof), reason(lost->detail));
        for (auto& other : peers_)
            if (other.get() != peer.get() && !other->gone)
                if (!send_all(other->socket.fd(), line_out, Clock::now() + kRetryEvery)) other->gone = true;
    }
}

std::optional<NodeResult> Meeting::lost() {
    if (!joined_) return std::nullopt;
    if (config_.node_rank == 0) {
        read_peers();
    } else if (node_zero_ && gone_.empty()) {
        std::string line;
        const auto read = node_zero_->reader.next(node_zero_->socket.fd(), line);
        if (read == LineReader::Read::line) {
            const auto words = words_of(line);
            const bool gone = words.size() >= 3 && words[0] == "gone";
            const auto node = gone ? bounded_number(words[1], 0, config_.nodes - 1) : std::nullopt;
            const auto proof = gone ? parse_node_proof(words[2]) : std::nullopt;
            if (node && proof)
                gone_.push_back({static_cast<int>(*node), *proof, printable(rest_after(line, 3), kMostReasonBytes)});
        } else if (read != LineReader::Read::nothing_yet) {
            node_zero_->gone = true;
            gone_.push_back({0, NodeProof::vanished, fmt::format("the connection to node 0 closed ({})", to_string(read))});
        }
    }
    if (gone_.empty()) return std::nullopt;
    return gone_.front();
}

JobOutcome Meeting::settle(const NodeResult& own, std::chrono::milliseconds limit) {
    JobOutcome job;
    if (!joined_) return job;
    const Clock::time_point deadline = Clock::now() + limit + kAnswerGrace;
    if (config_.node_rank == 0) return gather(own, deadline);
    if (!node_zero_->gone)
        send_all(node_zero_->socket.fd(), fmt::format("report {} {}\n", to_string(own.proof), reason(own.detail)),
                 Clock::now() + kAnswerGrace);
    return hear_outcome(deadline + kAnswerGrace);
}

JobOutcome Meeting::gather(const NodeResult& own, Clock::time_point deadline) {
    const auto waiting = [&] {
        return std::any_of(peers_.begin(), peers_.end(), [](const auto& peer) { return !peer->gone && !peer->report; });
    };
    while (waiting() && remaining_ms(deadline) > 0) {
        std::vector<pollfd> fds;
        for (const auto& peer : peers_)
            if (!peer->gone && !peer->report) fds.push_back({peer->socket.fd(), POLLIN, 0});
        if (::poll(fds.data(), fds.size(), remaining_ms(deadline)) < 0 && errno != EINTR) break;
        read_peers();
    }
    std::vector<NodeResult> results{NodeResult{0, own.proof, own.detail}};
    for (const auto& peer : peers_) {
        if (peer->report) {
            results.push_back(*peer->report);
        } else if (peer->gone) {
            results.push_back({peer->node, NodeProof::vanished, "its connection to node 0 closed before it reported"});
        } else {
            results.push_back({peer->node, NodeProof::silent, "connected, but no report by node 0's limit"});
        }
    }
    JobOutcome job;
    job.nodes = static_cast<int>(results.size());
    for (const NodeResult& result : results) ++job.counts[static_cast<std::size_t>(result.proof)];
    std::vector<NodeResult> not_passed;
    for (const NodeResult& result : results)
        if (result.proof != NodeProof::passed) not_passed.push_back(result);
    std::sort(not_passed.begin(), not_passed.end(), named_before);
    if (not_passed.size() > kMostNamedNodes + 1) not_passed.resize(kMostNamedNodes + 1);
    std::string lines;
    for (const NodeResult& result : not_passed)
        lines += fmt::format("node {} {} {}\n", result.node, to_string(result.proof), reason(result.detail));
    lines += fmt::format("outcome {}", job.nodes);
    for (const int count : job.counts) lines += fmt::format(" {}", count);
    lines += "\n";
    for (auto& peer : peers_)
        if (!peer->gone) send_all(peer->socket.fd(), lines, Clock::now() + kAnswerGrace);
    for (const NodeResult& result : not_passed)
        if (result.node != 0 && job.others.size() < kMostNamedNodes) job.others.push_back(result);
    return job;
}

JobOutcome Meeting::hear_outcome(Clock::time_point deadline) {
    JobOutcome job;
    while (true) {
        std::string line;
        const auto read = node_zero_->gone ? LineReader::Read::closed
                                           : node_zero_->reader.wait(node_zero_->socket.fd(), deadline, line);
        if (read != LineReader::Read::line) {
            job.heard = false;
            job.others = {NodeResult{0, read == LineReader::Read::nothing_yet ? NodeProof::silent : NodeProof::vanished,
                                     fmt::format("node 0 gave no outcome: {}", to_string(read))}};
            return job;
        }
        const auto words = words_of(line);
        if (words.empty()) continue;
        if (words[0] == "node" && words.size() >= 3) {
            const auto node = bounded_number(words[1], 0, config_.nodes - 1);
            const auto proof = parse_node_proof(words[2]);
            if (node && proof && *node != config_.node_rank && job.others.size() < kMostNamedNodes)
                job.others.push_back({static_cast<int>(*node), *proof, printable(rest_after(line, 3), kMostReasonBytes)});
        } else if (words[0] == "outcome" && words.size() == 2 + kNodeProofs) {
            const auto nodes = bounded_number(words[1], 2, config_.nodes);
            bool sane = nodes.has_value();
            std::int64_t sum = 0;
            for (std::size_t i = 0; i < kNodeProofs && sane; ++i) {
                const auto count = bounded_number(words[2 + i], 0, config_.nodes);
                sane = count.has_value();
                if (sane) {
                    job.counts[i] = static_cast<int>(*count);
                    sum += *count;
                }
            }
            if (sane && sum == *nodes) {
                job.nodes = static_cast<int>(*nodes);
                return job;
            }
            job = JobOutcome{};
            job.heard = false;
            job.others = {NodeResult{0, NodeProof::failed, fmt::format("node 0's outcome does not add up: '{}'",
                                                                        echoed(line))}};
            return job;
        }  // "gone" lines that came late are already known
    }
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

}  // namespace provision::network
