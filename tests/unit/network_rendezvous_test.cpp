// provision's rendezvous across nodes, on loopback: nodes as threads of this
// process and as processes of their own (fork), every node that comes gets
// node 0's id and its ranks, a node that never comes is named within the
// limit, and nothing that connects can make a node wait past it.
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "network/rendezvous.h"
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

const MakeId kId = [](std::string&) -> std::optional<std::string> { return std::string("00ab12"); };

const HealthPolicy& policy() {
    static const RecipeSet recipes = load_recipes_over_builtins(std::nullopt, {});
    return recipes.policy;
}

}  // namespace

TEST_CASE("every node that comes gets node 0's id, the ranks in all and its first rank", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    // Node 2 starts before node 0 listens: it retries until it can connect.
    auto two = std::async(std::launch::async, [&] { return rendezvous(node(port, 3, 2, 4, limit), kId); });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    int made = 0;
    auto zero = std::async(std::launch::async, [&] {
        return rendezvous(node(port, 3, 0, 8, limit), [&](std::string& why) {
            ++made;
            return kId(why);
        });
    });
    auto one = std::async(std::launch::async, [&] { return rendezvous(node(port, 3, 1, 2, limit), kId); });
    const auto a = zero.get(), b = one.get(), c = two.get();
    REQUIRE(a.status == RendezvousStatus::joined);
    REQUIRE(b.status == RendezvousStatus::joined);
    REQUIRE(c.status == RendezvousStatus::joined);
    CHECK(made == 1);
    for (const auto* outcome : {&a, &b, &c}) {
        CHECK(outcome->id == "00ab12");
        CHECK(outcome->ranks == 14);
    }
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
    auto zero = std::async(std::launch::async, [&] { return rendezvous(node(port, 4, 0, 1, limit), kId); });
    auto two = std::async(std::launch::async,
                          [&] { return rendezvous(node(port, 4, 2, 1, std::chrono::milliseconds(60000)), kId); });
    const auto a = zero.get(), c = two.get();
    CHECK(a.status == RendezvousStatus::missing);
    CHECK(a.missing == std::vector<int>{1, 3});
    CHECK(c.status == RendezvousStatus::missing);
    CHECK(c.missing == std::vector<int>{1, 3});
    const auto finding = rendezvous_finding(a, node(port, 4, 0, 1, limit), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "nodes_missing");
    CHECK(finding->words.find("node ranks 1, 3 of the job's 4 nodes had not come") != std::string::npos);
    CHECK(finding->words.find("within 3 s") != std::string::npos);
}

TEST_CASE("node 0 that never listens is the missing node", "[network][rendezvous]") {
    const auto outcome = rendezvous(node(free_port(), 2, 1, 1, std::chrono::milliseconds(400)), kId);
    CHECK(outcome.status == RendezvousStatus::missing);
    CHECK(outcome.missing == std::vector<int>{0});
    CHECK(outcome.detail.find("node 0 did not answer at 127.0.0.1 port") != std::string::npos);
}

TEST_CASE("another job's node, a rank twice, and garbage are refused without holding the rendezvous",
          "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] { return rendezvous(node(port, 2, 0, 1, limit), kId); });
    // Garbage without an end of line, then a node of another job.
    {
        const int fd = connect_retrying(port);
        const std::string junk(5000, 'x');
        ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
        ::close(fd);
    }
    auto other = node(port, 2, 1, 1, limit);
    other.job_key = rendezvous_job_key("127.0.0.1", "29501", 2, "");
    const auto refused = rendezvous(other, kId);
    CHECK(refused.status == RendezvousStatus::refused);
    CHECK(refused.detail.find("another job's rendezvous") != std::string::npos);
    const auto joined = rendezvous(node(port, 2, 1, 1, limit), kId);
    CHECK(joined.status == RendezvousStatus::joined);
    CHECK(zero.get().status == RendezvousStatus::joined);
}

TEST_CASE("node 0 without an id tells every node, which reports it", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    auto zero = std::async(std::launch::async, [&] {
        return rendezvous(node(port, 2, 0, 1, limit), [](std::string& why) -> std::optional<std::string> {
            why = "the worker of GPU 0 ended without a communicator id";
            return std::nullopt;
        });
    });
    const auto one = rendezvous(node(port, 2, 1, 1, limit), kId);
    CHECK(zero.get().status == RendezvousStatus::failed);
    CHECK(one.status == RendezvousStatus::failed);
    CHECK(one.detail.find("ended without a communicator id") != std::string::npos);
    const auto finding = rendezvous_finding(one, node(port, 2, 1, 1, limit), policy());
    REQUIRE(finding);
    CHECK(finding->signal == "rendezvous_failed");
}

TEST_CASE("nodes as processes of their own meet the same way", "[network][rendezvous]") {
    const auto port = free_port();
    const auto limit = std::chrono::milliseconds(20000);
    std::vector<pid_t> children;
    for (int rank = 1; rank < 3; ++rank) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const auto outcome = rendezvous(node(port, 3, rank, 1, limit), kId);
            const bool right = outcome.status == RendezvousStatus::joined && outcome.id == "00ab12" &&
                               outcome.ranks == 3 && outcome.first_rank == rank;
            ::_exit(right ? 0 : 1);
        }
        children.push_back(pid);
    }
    const auto zero = rendezvous(node(port, 3, 0, 1, limit), kId);
    CHECK(zero.status == RendezvousStatus::joined);
    for (const pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
}

TEST_CASE("the job's key: the same on every node of one job, another for another job", "[network][rendezvous]") {
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") == rendezvous_job_key("10.0.0.1", "29500", 4, ""));
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") != rendezvous_job_key("10.0.0.1", "29500", 2, ""));
    CHECK(rendezvous_job_key("10.0.0.1", "29500", 4, "") != rendezvous_job_key("10.0.0.12", "9500", 4, ""));
    CHECK(rendezvous_job_key("a", "b", 1, "").size() == 16);
}
