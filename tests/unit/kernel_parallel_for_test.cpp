#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "parallel_for.h"

using namespace provision::kernels;

namespace {

// Which index ran how often, and on how many threads.
struct Visits {
    std::vector<std::atomic<int>> counts;
    std::mutex mutex;
    std::set<std::thread::id> threads;
    explicit Visits(std::size_t n) : counts(n) {}
    void visit(std::size_t i) {
        ++counts[i];
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
    }
    bool each_once() const {
        for (const auto& count : counts)
            if (count != 1) return false;
        return true;
    }
};

}  // namespace

TEST_CASE("parallel_for runs every index once, on the calling thread when the work is small", "[kernels]") {
    Visits small(8);
    parallel_for(8, [&](std::size_t i) { small.visit(i); }, 64);  // 512 operations: no thread is worth it
    CHECK(small.each_once());
    CHECK(small.threads == std::set{std::this_thread::get_id()});

    Visits large(1000);
    parallel_for(1000, [&](std::size_t i) { large.visit(i); });
    CHECK(large.each_once());
    if (std::thread::hardware_concurrency() > 1) CHECK(large.threads.count(std::this_thread::get_id()) == 0);
}
