// Runs body(i) for i in [0, count) on the machine's cores.  The CPU
// references are what a quick check spends most of its time on; every index
// is still computed by one thread, in the same order, so results do not
// depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace provision::kernels {

// Below about this many operations a thread costs more to start (its stack
// mapped and unmapped) than it saves.
inline constexpr std::size_t kOperationsPerThread = std::size_t{1} << 16;

// `operations_per_index` is a rough cost of one body(i), so that small
// loops take fewer threads or none; left out, every core is worth it.
template <typename Body>
void parallel_for(std::size_t count, Body body, std::size_t operations_per_index = kOperationsPerThread) {
    const std::size_t worthwhile = std::max<std::size_t>(1, count * operations_per_index / kOperationsPerThread);
    const std::size_t workers = std::min<std::size_t>(
        {count, worthwhile, std::max(1u, std::thread::hardware_concurrency()), std::size_t{32}});
    if (workers <= 1) {
        for (std::size_t i = 0; i < count; ++i) body(i);
        return;
    }
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            for (std::size_t i = w; i < count; i += workers) body(i);
        });
    for (auto& thread : threads) thread.join();
}

}  // namespace provision::kernels
