#include <catch2/catch.hpp>

#include <set>

#include "validate/link_rounds.h"

using namespace provision;

namespace {

std::vector<GpuIndexPair> every_pair(int gpus) {
    std::vector<GpuIndexPair> pairs;
    for (int a = 0; a < gpus; ++a)
        for (int b = a + 1; b < gpus; ++b) pairs.push_back({a, b});
    return pairs;
}

// Each pair once, no GPU twice in a round; returns the number of rounds.
std::size_t check_schedule(const std::vector<GpuIndexPair>& asked) {
    const auto rounds = link_rounds(asked);
    std::set<GpuIndexPair> seen;
    for (const auto& round : rounds) {
        std::set<int> busy;
        for (const auto& [a, b] : round) {
            CHECK(a < b);
            CHECK(busy.insert(a).second);
            CHECK(busy.insert(b).second);
            CHECK(seen.insert({a, b}).second);
        }
    }
    CHECK(seen == std::set<GpuIndexPair>(asked.begin(), asked.end()));
    return rounds.size();
}

}  // namespace

TEST_CASE("link rounds: N GPUs with every pair take N-1 rounds (N even) or N (odd), each GPU once a round",
          "[validation][links]") {
    CHECK(check_schedule(every_pair(2)) == 1);
    CHECK(check_schedule(every_pair(3)) == 3);
    CHECK(check_schedule(every_pair(4)) == 3);
    CHECK(check_schedule(every_pair(5)) == 5);
    CHECK(check_schedule(every_pair(8)) == 7);
    CHECK(check_schedule(every_pair(16)) == 15);
    // 8 GPUs: every round keeps all of them busy.
    for (const auto& round : link_rounds(every_pair(8))) CHECK(round.size() == 4);
}

TEST_CASE("link rounds: only the pairs asked for, in either order, once each", "[validation][links]") {
    CHECK(check_schedule({{0, 1}, {2, 3}}) <= 2);
    const auto rounds = link_rounds({{1, 0}, {0, 1}, {3, 3}});
    REQUIRE(rounds.size() == 1);
    CHECK(rounds[0] == std::vector<GpuIndexPair>{{0, 1}});
    CHECK(link_rounds({}).empty());
}
