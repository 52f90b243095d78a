// provision's rendezvous across nodes, on loopback: nodes as threads of this
// process and as processes of their own (fork).  Every node that comes gets
// node 0's id and its ranks; a node that never comes is named within the
// limit; a node that comes and goes is not counted and may come again; the
// connections stay open through the proof, so a node that vanishes or fails
// is named to every other node; a token keeps strangers out; and nothing
// that connects can make a node wait past its limit.
#include <sys/socket.h>
#include <sys/wait.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "network/proof_findings.h"
#include "network/rendezvous.h"
#include "network/route.h"
#include "network/wire.h"
#include "recipe/recipe_loader.h"

using namespace provision;
using namespace provision::network;

namespace {

// A port nothing listens on now (the kernel's pick, released at once).
std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

RendezvousConfig node(std::uint16_t port, int nodes, int rank, int local_ranks, std::chrono::milliseconds limit) {
    RendezvousConfig config;
    config.master_addr = "127.0.0.1";
    config.port = port;
    config.nodes = nodes;
    config.min_nodes = nodes;
    config.node_rank = rank;
    config.local_ranks = local_ranks;
    config.job_key = rendezvous_job_key("127.0.0.1", "29500", nodes, "");
    config.limit = limit;
    return config;
}

// Connects to node 0 on loopback, as often as it takes for it to listen.
int connect_retrying(std::uint16_t port) {
    while (true) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// A listener on loopback that plays node 0 (for answers a real one never gives).
int listen_here(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    return fd;
}

void send_text(int fd, const std::string& text) { ::send(fd, text.data(), text.size(), MSG_NOSIGNAL); }

const MakeId kId = [](std::string&) -> std::optional<std::string> { return std::string("00ab12"); };

RendezvousOutcome meet(const RendezvousConfig& config, const MakeId& make_id = kId) {
    Meeting meeting(config);
    return meeting.meet(make_id);
}

// What a meeting hears of a lost node, polled as the worker pool polls it
// (a generous bound: the loss is known within one poll).
std::optional<NodeResult> lost_of(Meeting& meeting) {
    for (int i = 0; i < 4000; ++i) {
        if (auto lost = meeting.lost()) return lost;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::nullopt;
}

const HealthPolicy& policy() {
    static const RecipeSet recipes = load_recipes_over_builtins(std::nullopt, {});
    return recipes.policy;
}

}  // namespace

TEST_CASE("every node that comes gets node 0's id, the ranks in all and its first rank", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    // Node 2 starts before node 0 listens: it retries until it can connect.
    auto two = std::async(std::launch::async, [&] { return meet(node(port, 3, 2, 4, limit)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    int made = 0;
    auto zero = std::async(std::launch::async, [&] {
        return meet(node(port, 3, 0, 8, limit), [&](std::string& why) {
            ++made;
            return kId(why);
        });
    });
    auto one = std::async(std::launch::async, [&] { return meet(node(port, 3, 1, 2, limit)); });
    const auto a = zero.get(), b = one.get(), c = two.get();
    REQUIRE(a.status == RendezvousStatus::joined);
    REQUIRE(b.status == RendezvousStatus::joined);
    REQUIRE(c.status == RendezvousStatus::joined);
    CHECK(made == 1);
    for (const auto* outcome : {&a, &b, &c}) {
        CHECK(outcome->id == "00ab12");
        CHECK(outcome->ranks == 14);
    }
    CHECK(a.nodes == 3);
    CHECK(a.first_rank == 0);
    CHECK(b.first_rank == 8);   // after node 0's 8
    CHECK(c.first_rank == 10);  // after node 1's 2
    CHECK_FALSE(rendezvous_finding(a, node(port, 3, 0, 8, limit), policy()));
}

TEST_CASE("a node that never comes is named within the limit, on node 0 and on those that came",
          "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(3000);
    // Node 2 may wait long: node 0's limit, not its own, ends this rendezvous.
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 4, 0, 1, limit)); });
    auto two = std::async(std::launch::async,
                          [&] { return meet(node(port, 4, 2, 1, std::chrono::milliseconds(60000))); });
    const auto a = zero.get(), c = two.get();
    CHECK(a.status == RendezvousStatus::missing);
    CHECK(a.missing == std::vector<int>{1, 3});
    CHECK(c.status == RendezvousStatus::missing);
    CHECK(c.missing == std::vector<int>{1, 3});
    CHECK(c.missing_count == 2);
    const auto finding = rendezvous_finding(a, node(port, 4, 0, 1, limit), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "nodes_missing");
    CHECK(finding->words.find("node ranks 1, 3 of the job's 4 nodes had not come") != std::string::npos);
    CHECK(finding->words.find("within 3 s") != std::string::npos);
}

TEST_CASE("a node whose own limit is short still waits for node 0 once counted", "[network][rendezvous]") {
    // Nodes that start far apart: node 1's limit is 0.3 s, but node 0 counts it
    // and says how long it waits (here 15 s), so node 1 waits as long: it never
    // reports node 0 missing while node 0 counts it.  Node 2 comes at 10.8 s,
    // past node 1's own limit and the 10 s grace.
    const auto port = free_port();
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 3, 0, 1, std::chrono::milliseconds(15000))); });
    auto one = std::async(std::launch::async, [&] {
        ::close(connect_retrying(port));  // node 0 listens
        return meet(node(port, 3, 1, 1, std::chrono::milliseconds(300)));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10800));
    const auto c = meet(node(port, 3, 2, 1, std::chrono::milliseconds(5000)));
    const auto a = zero.get(), b = one.get();
    CHECK(a.status == RendezvousStatus::joined);
    CHECK(b.status == RendezvousStatus::joined);
    CHECK(c.status == RendezvousStatus::joined);
}

TEST_CASE("node 0 that never listens is the missing node", "[network][rendezvous]") {
    const auto outcome = meet(node(free_port(), 2, 1, 1, std::chrono::milliseconds(400)));
    CHECK(outcome.status == RendezvousStatus::missing);
    CHECK(outcome.missing == std::vector<int>{0});
    CHECK(outcome.detail.find("node 0 did not answer at 127.0.0.1 port") != std::string::npos);
}

TEST_CASE("a MASTER_ADDR that does not resolve is looked up again until the limit", "[network][rendezvous]") {
    // On Kubernetes the master's name appears only once its pod exists: the
    // wait is not over at the first failed lookup.
    auto config = node(free_port(), 2, 1, 1, std::chrono::milliseconds(1500));
    config.master_addr = "no-such-host.invalid";
    const auto start = std::chrono::steady_clock::now();
    const auto outcome = meet(config);
    const auto waited = std::chrono::steady_clock::now() - start;
    CHECK(outcome.status == RendezvousStatus::missing);
    CHECK(outcome.missing == std::vector<int>{0});
    CHECK(outcome.detail.find("MASTER_ADDR") != std::string::npos);
    CHECK(waited >= std::chrono::milliseconds(1400));
}

TEST_CASE("another job's node, a rank twice, and garbage are refused without holding the rendezvous",
          "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 2, 0, 1, limit)); });
    // Garbage without an end of line, then a node of another job.
    {
        const int fd = connect_retrying(port);
        send_text(fd, std::string(5000, 'x'));
        ::close(fd);
    }
    auto other = node(port, 2, 1, 1, limit);
    other.job_key = rendezvous_job_key("127.0.0.1", "29501", 2, "");
    const auto refused = meet(other);
    CHECK(refused.status == RendezvousStatus::refused);
    CHECK(refused.detail.find("another job's rendezvous") != std::string::npos);
    const auto joined = meet(node(port, 2, 1, 1, limit));
    CHECK(joined.status == RendezvousStatus::joined);
    CHECK(zero.get().status == RendezvousStatus::joined);
}

TEST_CASE("a node that came and left is not counted, and its restart joins", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 3, 0, 1, limit)); });
    // Node 1 says a well-formed hello, hears `wait`, and goes away.
    {
        const int fd = connect_retrying(port);
        send_text(fd, "provision-rendezvous 2 " + node(port, 3, 1, 1, limit).job_key +
                          " 3 1 1 0123456789abcdef0123456789abcdef\n");
        char answer[64] = {};
        CHECK(::recv(fd, answer, sizeof answer - 1, 0) > 0);
        CHECK(std::string(answer).rfind("wait ", 0) == 0);
        ::close(fd);
    }
    // Node 1 again (a restarted pod), and node 2.
    auto one = std::async(std::launch::async, [&] { return meet(node(port, 3, 1, 1, limit)); });
    auto two = std::async(std::launch::async, [&] { return meet(node(port, 3, 2, 1, limit)); });
    CHECK(one.get().status == RendezvousStatus::joined);
    CHECK(two.get().status == RendezvousStatus::joined);
    CHECK(zero.get().status == RendezvousStatus::joined);
}

TEST_CASE("silent connections neither spin node 0 nor keep a real node out", "[network][rendezvous]") {
    const auto port = free_port();
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 2, 0, 1, std::chrono::milliseconds(3000))); });
    std::vector<int> silent;
    for (int i = 0; i < 70; ++i) silent.push_back(connect_retrying(port));
    // They say nothing for longer than node 0's limit: only a node that is let
    // in beside them can join.
    const auto one = meet(node(port, 2, 1, 1, std::chrono::milliseconds(3000)));
    CHECK(one.status == RendezvousStatus::joined);
    CHECK(zero.get().status == RendezvousStatus::joined);
    for (const int fd : silent) ::close(fd);
}

TEST_CASE("node 0 of a job of 400 nodes with two present names the missing in one line", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(3000);
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 400, 0, 1, limit)); });
    const auto one = meet(node(port, 400, 1, 1, std::chrono::milliseconds(60000)));
    const auto a = zero.get();
    // Node 1 hears node 0's answer (not "node 0 missing"): 398 missing, 16 named.
    REQUIRE(one.status == RendezvousStatus::missing);
    CHECK(one.missing_count == 398);
    CHECK(one.missing.size() == kMostNamedNodes);
    CHECK(one.missing.front() == 2);
    CHECK(a.missing_count == 398);
    const auto finding = rendezvous_finding(one, node(port, 400, 1, 1, limit), policy());
    REQUIRE(finding);
    CHECK(finding->words.find("and 382 more") != std::string::npos);
}

TEST_CASE("the missing of a job of a million nodes stay bounded", "[network][rendezvous][bounds]") {
    const int nodes = 1 << 20;
    const auto config = node(free_port(), nodes, 0, 1, std::chrono::milliseconds(200));
    const auto a = meet(config);
    CHECK(a.status == RendezvousStatus::missing);
    CHECK(a.missing.size() == kMostNamedNodes);
    CHECK(a.missing_count == nodes - 1);
    const auto finding = rendezvous_finding(a, config, policy());
    REQUIRE(finding);
    CHECK(finding->words.size() < 1024);
}

TEST_CASE("an elastic job closes once its fewest nodes came, without waiting for the rest", "[network][rendezvous]") {
    // PET_NNODES=2:4 with two nodes: they meet by node 0's limit (torchrun's
    // last call is longer), nodes 2 and 3 are absent but not missing.
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(3000);
    auto zero_config = node(port, 4, 0, 1, limit);
    zero_config.min_nodes = 2;
    auto one_config = node(port, 4, 1, 1, limit);
    one_config.min_nodes = 2;
    auto zero = std::async(std::launch::async, [&] { return meet(zero_config); });
    const auto one = meet(one_config);
    const auto a = zero.get();
    CHECK(a.status == RendezvousStatus::joined);
    CHECK(one.status == RendezvousStatus::joined);
    CHECK(a.nodes == 2);
    CHECK(a.ranks == 2);
    CHECK(one.first_rank == 1);
    CHECK_FALSE(rendezvous_finding(a, zero_config, policy()));
}

TEST_CASE("a node with no GPU to offer comes and says so: node 0 does not wait for it", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] { return meet(node(port, 3, 0, 2, limit)); });
    auto one = std::async(std::launch::async, [&] { return meet(node(port, 3, 1, 0, limit)); });
    const auto c = meet(node(port, 3, 2, 2, limit));
    const auto a = zero.get(), b = one.get();
    CHECK(a.status == RendezvousStatus::joined);
    CHECK(a.ranks == 4);
    CHECK(b.status == RendezvousStatus::joined);
    CHECK(b.first_rank == 2);  // none of its own: past node 0's
    CHECK(c.first_rank == 2);
}

TEST_CASE("a node trusts no answer of node 0 that does not add up", "[network][rendezvous]") {
    const auto port = free_port();
    for (const std::string& answer : {std::string("ok zz 2147483647 2147483647\n"), std::string("ok 00ab\t12 4 1\n"),
                                      std::string("ok 00ab12 9223372036854775807 1\n"),
                                      std::string("missing 1 ") + std::string(2000, '1') + "\n"}) {
        INFO(answer);
        const int listener = listen_here(port);
        auto one = std::async(std::launch::async, [&] { return meet(node(port, 2, 1, 1, std::chrono::milliseconds(5000))); });
        const int fd = ::accept(listener, nullptr, nullptr);
        char hello[512] = {};
        ::recv(fd, hello, sizeof hello - 1, 0);
        send_text(fd, answer);
        const auto outcome = one.get();
        CHECK(outcome.status != RendezvousStatus::joined);
        CHECK(outcome.status != RendezvousStatus::missing);
        ::close(fd);
        ::close(listener);
    }
}

TEST_CASE("with a token only the job's nodes join: a stranger learns nothing", "[network][rendezvous][token]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto with_token = [&](RendezvousConfig config, std::string token) {
        config.token = RendezvousToken::of(std::move(token));
        return config;
    };
    auto zero = std::async(std::launch::async, [&] { return meet(with_token(node(port, 2, 0, 1, limit), "s3cret")); });
    // A stranger who knows the job's variables but not the token.
    const auto stranger = meet(node(port, 2, 1, 1, limit));
    CHECK(stranger.status == RendezvousStatus::refused);
    CHECK(stranger.id.empty());
    CHECK(stranger.detail.find("does not hold the job's rendezvous token") != std::string::npos);
    // One with another token.
    const auto wrong = meet(with_token(node(port, 2, 1, 1, limit), "guess"));
    CHECK(wrong.status == RendezvousStatus::refused);
    CHECK(wrong.id.empty());
    // The node that holds it.
    const auto one = meet(with_token(node(port, 2, 1, 1, limit), "s3cret"));
    CHECK(one.status == RendezvousStatus::joined);
    CHECK(one.id == "00ab12");
    CHECK(zero.get().status == RendezvousStatus::joined);
}

TEST_CASE("a node with a token trusts no node 0 that cannot prove it holds it", "[network][rendezvous][token]") {
    const auto port = free_port();
    Meeting zero(node(port, 2, 0, 1, std::chrono::milliseconds(3000)));
    auto met = std::async(std::launch::async, [&] { return zero.meet(kId); });
    auto config = node(port, 2, 1, 1, std::chrono::milliseconds(20000));
    config.token = RendezvousToken::of("s3cret");
    const auto one = meet(config);
    CHECK(one.status == RendezvousStatus::refused);
    CHECK(one.id.empty());
    CHECK(one.detail.find("node 0 did not ask for the job's rendezvous token") != std::string::npos);
    // Node 0 had counted it, and either saw it leave before it answered (it
    // is then missing at node 0's limit) or learns in the proof that it is gone.
    const auto zero_met = met.get();
    if (zero_met.status == RendezvousStatus::missing) {
        CHECK(zero_met.missing == std::vector<int>{1});
        return;
    }
    REQUIRE(zero_met.status == RendezvousStatus::joined);
    const std::optional<NodeResult> lost = lost_of(zero);
    REQUIRE(lost);
    CHECK(lost->node == 1);
}

TEST_CASE("a token file: its bytes less one newline; empty, missing or too large is refused", "[network][token]") {
    char folder[] = "/tmp/provision-token-XXXXXX";
    REQUIRE(::mkdtemp(folder));
    const std::string file = std::string(folder) + "/token";
    const auto write = [&](const std::string& text) {
        FILE* out = std::fopen(file.c_str(), "w");
        std::fwrite(text.data(), 1, text.size(), out);
        std::fclose(out);
    };
    std::string why;
    write("s3cret\n");
    const auto token = RendezvousToken::read_file(file, why);
    REQUIRE(token);
    CHECK(token->prove("x") == RendezvousToken::of("s3cret").prove("x"));
    CHECK(token->proves(RendezvousToken::of("s3cret").prove("x"), "x"));
    CHECK_FALSE(token->proves(RendezvousToken::of("s3cret2").prove("x"), "x"));
    CHECK_FALSE(token->proves(RendezvousToken::of("s3cret").prove("y"), "x"));
    // HMAC-SHA256 as RFC 4231 gives it (test case 2).
    CHECK(RendezvousToken::of("Jefe").prove("what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    write("\n");
    CHECK_FALSE(RendezvousToken::read_file(file, why));
    CHECK(why == "it is empty");
    write(std::string(kMostTokenBytes + 1, 'a'));
    CHECK_FALSE(RendezvousToken::read_file(file, why));
    CHECK_FALSE(RendezvousToken::read_file(std::string(folder) + "/none", why));
    std::remove(file.c_str());
    ::rmdir(folder);
    CHECK(fresh_nonce().size() == 32);
    CHECK(fresh_nonce() != fresh_nonce());
}

TEST_CASE("node 0 without an id tells every node, which reports it", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] {
        return meet(node(port, 2, 0, 1, limit), [](std::string& why) -> std::optional<std::string> {
            why = "the worker of GPU 0 ended without a communicator id";
            return std::nullopt;
        });
    });
    const auto one = meet(node(port, 2, 1, 1, limit));
    CHECK(zero.get().status == RendezvousStatus::failed);
    CHECK(one.status == RendezvousStatus::failed);
    CHECK(one.detail.find("ended without a communicator id") != std::string::npos);
    const auto finding = rendezvous_finding(one, node(port, 2, 1, 1, limit), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "rendezvous_failed");
}

namespace {

// Two nodes met, then each does `part` with its meeting: what node 0 and
// node 1 each settle on.
struct Settled {
    JobOutcome zero, one;
    std::optional<NodeResult> zero_lost;
};

}  // namespace

TEST_CASE("a node that vanishes after its hello is named to node 0 at once, and never fails it",
          "[network][rendezvous][proof]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    Meeting zero(node(port, 2, 0, 1, limit));
    auto met = std::async(std::launch::async, [&] { return zero.meet(kId); });
    {
        Meeting one(node(port, 2, 1, 1, limit));
        REQUIRE(one.meet(kId).status == RendezvousStatus::joined);
        REQUIRE(met.get().status == RendezvousStatus::joined);
    }  // node 1's provision is killed: its connection closes
    const std::optional<NodeResult> lost = lost_of(zero);
    REQUIRE(lost);
    CHECK(lost->node == 1);
    CHECK(lost->proof == NodeProof::vanished);
    // Node 0's rank was stopped waiting: not measured, and the outcome names node 1.
    const NodeResult own{0, NodeProof::not_measured, "stopped waiting"};
    const auto job = zero.settle(own, std::chrono::milliseconds(1000));
    CHECK(job.nodes == 2);
    CHECK(job.count(NodeProof::vanished) == 1);
    const auto verdict = judge_proof(own, job);
    CHECK(verdict.blame == ProofBlame::nodes_lost);
    REQUIRE(verdict.lost.size() == 1);
    CHECK(verdict.lost[0].node == 1);
    const auto finding = proof_finding(verdict, job, nullptr, std::chrono::milliseconds(1000), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "nodes_lost");
    CHECK(finding->level == HealthLevel::degraded);
    CHECK(finding->words.find("node 1 vanished") != std::string::npos);
}

TEST_CASE("a node whose NCCL failed carries the failure; the others hear it and are not blamed",
          "[network][rendezvous][proof]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    Meeting zero(node(port, 3, 0, 1, limit)), one(node(port, 3, 1, 1, limit)), two(node(port, 3, 2, 1, limit));
    auto met0 = std::async(std::launch::async, [&] { return zero.meet(kId); });
    auto met2 = std::async(std::launch::async, [&] { return two.meet(kId); });
    REQUIRE(one.meet(kId).status == RendezvousStatus::joined);
    REQUIRE(met0.get().status == RendezvousStatus::joined);
    REQUIRE(met2.get().status == RendezvousStatus::joined);
    const NodeResult failed{1, NodeProof::failed, "ncclCommInitRank: NCCL error 2 (unhandled system error)"};
    auto settled1 = std::async(std::launch::async, [&] { return one.settle(failed, std::chrono::milliseconds(5000)); });
    // Node 0 hears of it at once and tells node 2, whose ranks stop waiting.
    const auto heard0 = lost_of(zero), heard2 = lost_of(two);
    REQUIRE(heard0);
    REQUIRE(heard2);
    CHECK(heard2->node == 1);
    CHECK(heard2->proof == NodeProof::failed);
    const NodeResult stopped0{0, NodeProof::not_measured, "stopped waiting"};
    const NodeResult stopped2{2, NodeProof::not_measured, "stopped waiting"};
    auto settled2 = std::async(std::launch::async, [&] { return two.settle(stopped2, std::chrono::milliseconds(5000)); });
    const auto job0 = zero.settle(stopped0, std::chrono::milliseconds(5000));
    const auto job1 = settled1.get(), job2 = settled2.get();
    CHECK(judge_proof(failed, job1).blame == ProofBlame::own_failure);
    for (const auto& [own, job] : {std::pair{stopped0, job0}, std::pair{stopped2, job2}}) {
        const auto verdict = judge_proof(own, job);
        CHECK(verdict.blame == ProofBlame::nodes_lost);
        REQUIRE(verdict.lost.size() == 1);
        CHECK(verdict.lost[0].node == 1);
        CHECK(verdict.lost[0].detail.find("NCCL error 2") != std::string::npos);
    }
}

TEST_CASE("every node timed out together: the network between them, not a GPU", "[network][rendezvous][proof]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    Meeting zero(node(port, 2, 0, 1, limit)), one(node(port, 2, 1, 1, limit));
    auto met0 = std::async(std::launch::async, [&] { return zero.meet(kId); });
    REQUIRE(one.meet(kId).status == RendezvousStatus::joined);
    REQUIRE(met0.get().status == RendezvousStatus::joined);
    const NodeResult late0{0, NodeProof::timed_out, "GPU 0's rank did not finish within 23 s"};
    const NodeResult late1{1, NodeProof::timed_out, "GPU 0's rank did not finish within 23 s"};
    auto settled1 = std::async(std::launch::async, [&] { return one.settle(late1, std::chrono::milliseconds(5000)); });
    const auto job0 = zero.settle(late0, std::chrono::milliseconds(5000));
    const auto job1 = settled1.get();
    CHECK(judge_proof(late0, job0).blame == ProofBlame::network_timeout);
    CHECK(judge_proof(late1, job1).blame == ProofBlame::network_timeout);
    const auto finding = proof_finding(judge_proof(late1, job1), job1, nullptr, std::chrono::milliseconds(23000), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "nodes_unreachable");
    CHECK(finding->level == HealthLevel::degraded);
}

TEST_CASE("node 0 that vanishes during the proof is named by the others", "[network][rendezvous][proof]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    Meeting one(node(port, 2, 1, 1, limit));
    {
        Meeting zero(node(port, 2, 0, 1, limit));
        auto met0 = std::async(std::launch::async, [&] { return zero.meet(kId); });
        REQUIRE(one.meet(kId).status == RendezvousStatus::joined);
        REQUIRE(met0.get().status == RendezvousStatus::joined);
    }
    const NodeResult late{1, NodeProof::timed_out, "waited"};
    const auto job = one.settle(late, std::chrono::milliseconds(200));
    CHECK_FALSE(job.heard);
    const auto verdict = judge_proof(late, job);
    CHECK(verdict.blame == ProofBlame::nodes_lost);
    REQUIRE(verdict.lost.size() == 1);
    CHECK(verdict.lost[0].node == 0);
}

TEST_CASE("nodes as processes of their own meet the same way", "[network][rendezvous]") {
    // 16 nodes, each with as many ranks as its node rank is odd or even
    // (1 or 2): every node's first rank follows from those before it.
    const int nodes = 16;
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(30000);
    const auto ranks_of = [](int rank) { return rank % 2 == 0 ? 2 : 1; };
    std::vector<pid_t> children;
    for (int rank = 1; rank < nodes; ++rank) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            Meeting meeting(node(port, nodes, rank, ranks_of(rank), limit));
            const auto outcome = meeting.meet(kId);
            int first = 0;
            for (int before = 0; before < rank; ++before) first += ranks_of(before);
            bool right = outcome.status == RendezvousStatus::joined && outcome.id == "00ab12" &&
                         outcome.ranks == 24 && outcome.first_rank == first;
            const auto job = meeting.settle({rank, NodeProof::passed, "ok"}, std::chrono::milliseconds(10000));
            right = right && job.heard && job.nodes == nodes && job.count(NodeProof::passed) == nodes;
            ::_exit(right ? 0 : 1);
        }
        children.push_back(pid);
    }
    Meeting zero(node(port, nodes, 0, ranks_of(0), limit));
    const auto outcome = zero.meet(kId);
    CHECK(outcome.status == RendezvousStatus::joined);
    CHECK(outcome.ranks == 24);
    const auto job = zero.settle({0, NodeProof::passed, "ok"}, std::chrono::milliseconds(10000));
    CHECK(job.count(NodeProof::passed) == nodes);
    for (const pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
}

TEST_CASE("a job's nodes that all arrive at once are all let in", "[network][rendezvous]") {
    // 300 nodes connect together, far more than the idle connections node 0
    // holds beyond them (bench/network/rendezvous_scale found 1,024 nodes
    // pushed out by their own number).
    const int nodes = 300;
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(30000);
    Meeting zero(node(port, nodes, 0, 1, limit));
    auto met = std::async(std::launch::async, [&] { return zero.meet(kId); });
    ::close(connect_retrying(port));
    std::atomic<int> joined{0};
    std::vector<std::thread> threads;
    for (int rank = 1; rank < nodes; ++rank)
        threads.emplace_back([&, rank] {
            if (meet(node(port, nodes, rank, 1, limit)).status == RendezvousStatus::joined) ++joined;
        });
    for (auto& thread : threads) thread.join();
    CHECK(met.get().status == RendezvousStatus::joined);
    CHECK(joined == nodes - 1);
}

TEST_CASE("the job's key: the same on every node of one job, another for another job", "[network][rendezvous]") {
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") == rendezvous_job_key("10.0.0.1", "29500", 4, ""));
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") != rendezvous_job_key("10.0.0.1", "29500", 2, ""));
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") != rendezvous_job_key("10.0.0.12", "9500", 4, ""));
    CHECK(rendezvous_job_key("a", "b", 1, "").size() == 16);
}

TEST_CASE("a line is at most 1,024 bytes, its newline included", "[network][wire]") {
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    LineReader reader;
    std::string line;
    send_text(pair[1], std::string(kMostLineBytes - 1, 'a') + "\n");
    CHECK(reader.wait(pair[0], Clock::now() + std::chrono::seconds(5), line) == LineReader::Read::line);
    CHECK(line.size() == kMostLineBytes - 1);
    send_text(pair[1], std::string(kMostLineBytes, 'b') + "\n");
    CHECK(reader.wait(pair[0], Clock::now() + std::chrono::seconds(5), line) == LineReader::Read::too_long);
    ::close(pair[0]);
    ::close(pair[1]);
}

TEST_CASE("node ranks as ranges: written within a bound, read back, anything else refused", "[network][wire]") {
    CHECK(rank_ranges({}, 100) == "-");
    CHECK(rank_ranges({1, 3, 4, 5, 9}, 100) == "1,3-5,9");
    CHECK(parse_rank_ranges("1,3-5,9", 10, 100) == std::vector<int>{1, 3, 4, 5, 9});
    std::vector<int> every_other;
    for (int rank = 0; rank < 100000; rank += 2) every_other.push_back(rank);
    const std::string cut = rank_ranges(every_other, 1000);
    CHECK(cut.size() <= 1000);
    CHECK(cut.back() == '+');
    const auto back = parse_rank_ranges(cut, 100000, 16);
    REQUIRE(back);
    CHECK(back->size() == 16);
    for (const char* bad : {"", "5-3", "3,1", "1,,2", "x", "100", "-1", "2147483648"}) {
        INFO(bad);
        CHECK_FALSE(parse_rank_ranges(bad, 100, 16));
    }
    CHECK(bounded_number("2147483647", 0, 100) == std::nullopt);
    CHECK(is_hex("00ab", 8));
    CHECK_FALSE(is_hex("00aB", 8));
    CHECK_FALSE(is_hex("0a\tb", 8));
}

TEST_CASE("who is to blame: one's own failure, others lost, or the network", "[network][proof]") {
    const auto outcome = [](std::vector<NodeResult> all) {
        JobOutcome job;
        job.nodes = static_cast<int>(all.size());
        for (const auto& node : all) {
            ++job.counts[static_cast<std::size_t>(node.proof)];
            if (node.node != 0 && node.proof != NodeProof::passed) job.others.push_back(node);
        }
        return job;
    };
    const NodeResult passed{0, NodeProof::passed, ""}, failed{0, NodeProof::failed, "NCCL error 6"},
        late{0, NodeProof::timed_out, ""};
    CHECK(judge_proof(passed, outcome({passed, {1, NodeProof::passed, ""}})).blame == ProofBlame::passed);
    // A node that vanished explains this node's NCCL error (a closed socket).
    CHECK(judge_proof(failed, outcome({failed, {1, NodeProof::vanished, ""}})).blame == ProofBlame::nodes_lost);
    CHECK(judge_proof(failed, outcome({failed, {1, NodeProof::timed_out, ""}})).blame == ProofBlame::own_failure);
    CHECK(judge_proof(late, outcome({late, {1, NodeProof::silent, ""}})).blame == ProofBlame::nodes_lost);
    CHECK(judge_proof(late, outcome({late, {1, NodeProof::timed_out, ""}})).blame == ProofBlame::network_timeout);
    // Others finished while this node's ranks waited: its own.
    CHECK(judge_proof(late, outcome({late, {1, NodeProof::passed, ""}})).blame == ProofBlame::own_failure);
    CHECK(judge_proof({0, NodeProof::not_measured, ""}, outcome({{0, NodeProof::not_measured, ""},
                                                                 {1, NodeProof::passed, ""},
                                                                 {2, NodeProof::passed, ""}}))
              .blame == ProofBlame::no_part);
}

TEST_CASE("the proof's limit grows with the job and the bytes, and is longer over sockets", "[network][proof]") {
    const std::size_t bytes = std::size_t{256} << 20;
    const auto two = proof_limit(2, 16, bytes, 5, ProofTransport::socket);
    CHECK(two > std::chrono::seconds(5));  // never the per-check limit
    CHECK(proof_limit(1024, 8192, bytes, 5, ProofTransport::socket) > two);
    CHECK(proof_limit(2, 16, bytes, 5, ProofTransport::rdma) < two);
    CHECK(proof_limit(2, 16, bytes / 2, 5, ProofTransport::socket) < two);
}

TEST_CASE("the proof's bandwidth against the transport's figure", "[network][proof]") {
    const ExpectedBandwidth eth{25000.0 / 8000, "eth0 at 25000 Mb/s"};
    CHECK_FALSE(bandwidth_finding(2.9, eth, policy()));
    const auto low = bandwidth_finding(0.4, eth, policy());
    REQUIRE(low);
    CHECK(low->signal == "nccl_bandwidth_low");
    CHECK(low->words.find("3.12 GB/s") != std::string::npos);
    CHECK_FALSE(bandwidth_finding(0.4, std::nullopt, policy()));
}

TEST_CASE("MASTER_ADDR with an IPv6 zone keeps the link it names", "[network][rendezvous]") {
    std::string why;
    const auto named = resolve_master("fe80::1%lo", std::chrono::milliseconds(500), why);
    REQUIRE(named);
    CHECK(named->family == Family::ipv6);
    CHECK(named->scope_id == ::if_nametoindex("lo"));
    const auto numbered = resolve_master("fe80::1%7", std::chrono::milliseconds(500), why);
    REQUIRE(numbered);
    CHECK(numbered->scope_id == 7);
    CHECK_FALSE(resolve_master("fe80::1%no-such-if0", std::chrono::milliseconds(500), why));
    CHECK(why.find("no interface") != std::string::npos);
}
